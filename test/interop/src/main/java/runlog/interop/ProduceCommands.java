package runlog.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.generic.GenericRecordBuilder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * A producer that is not runlog: writes runlog command records (SubmitCommand, CancelCommand)
 * to the commands topic with Apache Kafka's own Java client, inside a Kafka transaction together
 * with a record of its own (an "order" to another topic), then commits or aborts that transaction.
 *
 * <pre>java -cp 'target/classes:lib/*' runlog.interop.ProduceCommands \
 *     --brokers HOST:PORT[,...] --topic EVENTS_TOPIC --schemas SCHEMAS/commands \
 *     --commands FILE.json --mode commit|abort [--transactional-id ID] [--order TEXT]</pre>
 *
 * <ul>
 *   <li>Commands go to {@code EVENTS_TOPIC.commands}, the order record (value: TEXT as UTF-8,
 *       default "order") to {@code EVENTS_TOPIC.orders}; both topics must exist.
 *   <li>FILE.json: a JSON array of commands, each {@code {"type": "SubmitCommand", <fields>}}. The
 *       newest {@code <type>.v<N>.avsc} of the schema directory drives the conversion: exactly the
 *       schema's fields (an absent one takes its default; an unknown one is refused); a union value
 *       is null or a value of one of its branches (the first that fits); bytes as standard base64;
 *       an enum as its symbol; a map as an object; long and int as JSON integers.
 *   <li>Value: Avro single-object encoding by {@link BinaryMessageEncoder} (0xC3 0x01, the writer
 *       schema's CRC-64-AVRO fingerprint little-endian, the body). Key: the UTF-8 bytes of
 *       {@code tenant + "\u0000" + thread}. No partitioner is configured: Kafka's default
 *       partitioner (murmur2 of the key) picks the partition, as for any Kafka producer.
 *   <li>Every record is sent and acknowledged (so it is in the log) before the transaction is
 *       committed or aborted as {@code --mode} says.
 * </ul>
 *
 * <p>Output, one JSON object per line: per record sent {@code {"topic", "partition", "offset",
 * "type", "requestId"}} (type "order" and no requestId for the order), then {@code {"outcome":
 * "committed"|"aborted", "transactionalId": ...}}. Exit 0 on success; 2 for bad arguments or a bad
 * commands file (nothing sent then: every record is built before Kafka is contacted); 1 when Kafka
 * fails (message on stderr).
 */
public final class ProduceCommands {
  private static final Pattern VERSIONED = Pattern.compile("^(.+)\\.v(\\d+)\\.avsc$");
  private static final ObjectMapper MAPPER = new ObjectMapper();
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final List<String> OPTIONS =
      List.of("--brokers", "--topic", "--schemas", "--commands", "--mode", "--transactional-id", "--order");

  private ProduceCommands() {}

  /** A bad argument or commands file: exit 2, nothing sent. */
  static final class BadInput extends Exception {
    BadInput(String message) {
      super(message);
    }
  }

  private record Command(String type, String requestId, byte[] key, byte[] value) {}

  public static void main(String[] args) {
    Map<String, String> options;
    List<Command> commands;
    try {
      options = parseArgs(args);
      Map<String, Schema> schemas = newestSchemas(Path.of(options.get("--schemas")));
      commands = readCommands(Path.of(options.get("--commands")), schemas);
    } catch (BadInput | IOException e) {
      System.err.println("ProduceCommands: " + e.getMessage());
      System.err.println(
          "usage: ProduceCommands --brokers H:P --topic T --schemas DIR --commands FILE.json --mode commit|abort"
              + " [--transactional-id ID] [--order TEXT]");
      System.exit(2);
      return;
    }
    try {
      produce(options, commands);
    } catch (Exception e) {
      System.err.println("ProduceCommands: Kafka failed: " + e);
      System.exit(1);
    }
  }

  static Map<String, String> parseArgs(String[] args) throws BadInput {
    Map<String, String> options = new HashMap<>();
    for (int i = 0; i < args.length; i += 2) {
      if (!OPTIONS.contains(args[i])) throw new BadInput("unknown option " + quote(args[i]));
      if (i + 1 >= args.length) throw new BadInput("option " + args[i] + " needs a value");
      if (options.put(args[i], args[i + 1]) != null) throw new BadInput("option " + args[i] + " given twice");
    }
    for (String required : List.of("--brokers", "--topic", "--schemas", "--commands", "--mode")) {
      if (!options.containsKey(required)) throw new BadInput("missing option " + required);
    }
    String mode = options.get("--mode");
    if (!mode.equals("commit") && !mode.equals("abort")) throw new BadInput("--mode must be commit or abort, got " + quote(mode));
    if (options.get("--topic").isEmpty()) throw new BadInput("--topic must not be empty");
    options.putIfAbsent("--transactional-id", "runlog-interop-" + UUID.randomUUID());
    options.putIfAbsent("--order", "order");
    return options;
  }

  /** The newest version of each record schema of `dir`, by simple name (SubmitCommand, CancelCommand). */
  static Map<String, Schema> newestSchemas(Path dir) throws IOException, BadInput {
    if (!Files.isDirectory(dir)) throw new BadInput("--schemas " + quote(dir.toString()) + " is not a directory");
    Map<String, Integer> versions = new HashMap<>();
    Map<String, Schema> newest = new HashMap<>();
    try (Stream<Path> files = Files.list(dir)) {
      for (Path file : files.sorted().toList()) {
        Matcher m = VERSIONED.matcher(file.getFileName().toString());
        if (!m.matches()) continue;
        int version = Integer.parseInt(m.group(2));
        if (versions.getOrDefault(m.group(1), -1) >= version) continue;
        versions.put(m.group(1), version);
        newest.put(m.group(1), new Schema.Parser().parse(file.toFile()));
      }
    }
    if (newest.isEmpty()) throw new BadInput("no <Type>.v<N>.avsc schemas in " + quote(dir.toString()));
    return newest;
  }

  static List<Command> readCommands(Path file, Map<String, Schema> schemas) throws IOException, BadInput {
    JsonNode root;
    try {
      root = MAPPER.readTree(file.toFile());
    } catch (IOException e) {
      throw new BadInput("cannot read the commands file " + quote(file.toString()) + ": " + e.getMessage());
    }
    if (root == null || !root.isArray()) throw new BadInput("the commands file must hold a JSON array of commands");
    List<Command> commands = new ArrayList<>();
    for (int i = 0; i < root.size(); i++) commands.add(toCommand(root.get(i), schemas, "commands[" + i + "]"));
    return commands;
  }

  private static Command toCommand(JsonNode json, Map<String, Schema> schemas, String path) throws BadInput {
    if (!json.isObject()) throw new BadInput(path + " must be an object, got " + json);
    JsonNode type = json.get("type");
    if (type == null || !type.isTextual() || !schemas.containsKey(type.asText())) {
      throw new BadInput(path + ".type must name a schema of " + schemas.keySet() + ", got " + type);
    }
    Schema schema = schemas.get(type.asText());
    ObjectNode fields = ((ObjectNode) json).deepCopy();
    fields.remove("type");
    GenericRecord record = (GenericRecord) fromJson(schema, fields, path);
    ByteBuffer encoded;
    try {
      encoded = new BinaryMessageEncoder<GenericRecord>(GenericData.get(), schema).encode(record);
    } catch (IOException | RuntimeException e) {
      throw new BadInput(path + ": Avro cannot encode it: " + e.getMessage());
    }
    byte[] value = new byte[encoded.remaining()];
    encoded.get(value);
    String key = record.get("tenant") + "\u0000" + record.get("thread");
    return new Command(type.asText(), String.valueOf(record.get("requestId")), key.getBytes(StandardCharsets.UTF_8), value);
  }

  /** A JSON value as the Avro generic value of `schema` (see the class comment). */
  private static Object fromJson(Schema schema, JsonNode json, String path) throws BadInput {
    switch (schema.getType()) {
      case RECORD: {
        if (!json.isObject()) throw new BadInput(path + " must be an object, got " + json);
        GenericRecordBuilder builder = new GenericRecordBuilder(schema);
        for (Iterator<Map.Entry<String, JsonNode>> it = json.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          Schema.Field field = schema.getField(e.getKey());
          if (field == null) throw new BadInput(path + ": " + schema.getName() + " has no field " + quote(e.getKey()));
          builder.set(field, fromJson(field.schema(), e.getValue(), path + "." + e.getKey()));
        }
        try {
          return builder.build();
        } catch (RuntimeException e) {
          throw new BadInput(path + ": " + e.getMessage());
        }
      }
      case UNION: {
        if (json.isNull() && schema.getTypes().stream().anyMatch(t -> t.getType() == Schema.Type.NULL)) return null;
        for (Schema branch : schema.getTypes()) {
          if (branch.getType() == Schema.Type.NULL) continue;
          try {
            return fromJson(branch, json, path);
          } catch (BadInput tryNext) {
            // not this branch
          }
        }
        throw new BadInput(path + ": " + json + " fits no branch of " + schema);
      }
      case STRING:
        if (!json.isTextual()) throw new BadInput(path + " must be a string, got " + json);
        return json.asText();
      case ENUM:
        if (!json.isTextual() || !schema.hasEnumSymbol(json.asText())) {
          throw new BadInput(path + " must be one of " + schema.getEnumSymbols() + ", got " + json);
        }
        return new GenericData.EnumSymbol(schema, json.asText());
      case BYTES:
        if (!json.isTextual()) throw new BadInput(path + " must be base64 text, got " + json);
        try {
          return ByteBuffer.wrap(Base64.getDecoder().decode(json.asText()));
        } catch (IllegalArgumentException e) {
          throw new BadInput(path + " is not base64: " + e.getMessage());
        }
      case INT:
        if (!json.isIntegralNumber() || !json.canConvertToInt()) throw new BadInput(path + " must be an int, got " + json);
        return json.intValue();
      case LONG:
        if (!json.isIntegralNumber() || !json.canConvertToLong()) throw new BadInput(path + " must be a long, got " + json);
        return json.longValue();
      case BOOLEAN:
        if (!json.isBoolean()) throw new BadInput(path + " must be true or false, got " + json);
        return json.booleanValue();
      case MAP: {
        if (!json.isObject()) throw new BadInput(path + " must be an object, got " + json);
        Map<String, Object> map = new LinkedHashMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = json.fields(); it.hasNext(); ) {
          Map.Entry<String, JsonNode> e = it.next();
          map.put(e.getKey(), fromJson(schema.getValueType(), e.getValue(), path + "[" + quote(e.getKey()) + "]"));
        }
        return map;
      }
      case ARRAY: {
        if (!json.isArray()) throw new BadInput(path + " must be an array, got " + json);
        List<Object> list = new ArrayList<>();
        for (int i = 0; i < json.size(); i++) list.add(fromJson(schema.getElementType(), json.get(i), path + "[" + i + "]"));
        return list;
      }
      default:
        throw new BadInput(path + ": schema type " + schema.getType() + " is not handled");
    }
  }

  /** One transaction: the order record and every command, each acknowledged, then commit or abort. */
  private static void produce(Map<String, String> options, List<Command> commands) throws Exception {
    String topic = options.get("--topic");
    String transactionalId = options.get("--transactional-id");
    Properties config = new Properties();
    config.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, options.get("--brokers"));
    config.put(ProducerConfig.CLIENT_ID_CONFIG, "runlog-interop-producer");
    config.put(ProducerConfig.TRANSACTIONAL_ID_CONFIG, transactionalId);
    config.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
    config.put(ProducerConfig.ACKS_CONFIG, "all");
    config.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, "30000");
    config.put(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG, "60000");
    config.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());
    config.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, ByteArraySerializer.class.getName());

    PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
    try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(config)) {
      producer.initTransactions();
      producer.beginTransaction();
      byte[] order = options.get("--order").getBytes(StandardCharsets.UTF_8);
      RecordMetadata sent = producer.send(new ProducerRecord<>(topic + ".orders", order)).get();
      out.println(MAPPER.writeValueAsString(sentLine(sent, "order", null)));
      for (Command command : commands) {
        sent = producer.send(new ProducerRecord<>(topic + ".commands", command.key(), command.value())).get();
        out.println(MAPPER.writeValueAsString(sentLine(sent, command.type(), command.requestId())));
      }
      producer.flush();
      boolean commit = options.get("--mode").equals("commit");
      if (commit) producer.commitTransaction();
      else producer.abortTransaction();
      ObjectNode done = JSON.objectNode();
      done.put("outcome", commit ? "committed" : "aborted");
      done.put("transactionalId", transactionalId);
      out.println(MAPPER.writeValueAsString(done));
      producer.close(Duration.ofSeconds(10));
    }
  }

  private static ObjectNode sentLine(RecordMetadata sent, String type, String requestId) {
    ObjectNode line = JSON.objectNode();
    line.put("topic", sent.topic());
    line.put("partition", sent.partition());
    line.put("offset", sent.offset());
    line.put("type", type);
    if (requestId != null) line.put("requestId", requestId);
    return line;
  }

  private static String quote(String s) {
    return JSON.textNode(s).toString();
  }
}
