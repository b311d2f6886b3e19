package runlog.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.avro.Schema;
import org.apache.avro.SchemaNormalization;
import org.apache.avro.generic.GenericData;
import org.apache.avro.generic.GenericDatumReader;
import org.apache.avro.generic.GenericEnumSymbol;
import org.apache.avro.generic.GenericFixed;
import org.apache.avro.generic.GenericRecord;
import org.apache.avro.io.DatumReader;
import org.apache.avro.message.BinaryMessageDecoder;
import org.apache.avro.message.BinaryMessageEncoder;
import org.apache.avro.message.SchemaStore;

/**
 * Decodes runlog event records (Avro single-object encoding) with Apache Avro's own Java library,
 * to show that records runlog writes are readable by others given only schemas/.
 *
 * <pre>java -cp 'target/classes:lib/*' runlog.interop.DecodeEvents SCHEMA_DIR BIN_DIR</pre>
 *
 * Every {@code *.avsc} of SCHEMA_DIR goes into one {@link SchemaStore.Cache}. Each {@code *.bin}
 * file of BIN_DIR (one record value) is decoded by a {@link BinaryMessageDecoder} whose reader
 * schema is the newest version ({@code <Type>.v<N>.avsc}, highest N) of the record the writer
 * fingerprint names; Avro itself checks the 0xC3 0x01 marker, looks the fingerprint up in the
 * cache and resolves writer to reader schema. The fingerprint is peeked at only to choose that
 * reader schema; a record with a bad header or an unknown fingerprint is handed to a decoder
 * anyway, so that Avro's own error reports it.
 *
 * <p>Output, one JSON object per line, files in name order:
 * <pre>{"file": "...", "schema": "runlog.events.Submitted", "writerSchema": "Submitted.v1.avsc",
 *  "fingerprint": "&lt;16 hex digits, unsigned&gt;", "reencodedIdentical": true|false|null, "record": {...}}</pre>
 * or {@code {"file": "...", "error": "..."}} for a record Avro refused (exit code 1 then).
 * {@code reencodedIdentical}: the record, encoded again with Avro's {@link BinaryMessageEncoder}
 * and the writer schema, gives exactly the file's bytes (so no trailing bytes, nothing lost; maps
 * are read into LinkedHashMaps, in the order written, for this);
 * null when the writer schema is not the reader schema (no re-encoding to compare then).
 *
 * <p>The record as JSON, driven by the schema:
 * <ul>
 *   <li>record: object, fields in schema order; map: object, entries in the order written; array: array;
 *   <li>string: string; enum: its symbol; boolean: true/false;
 *   <li>int, long (also logical types such as timestamp-millis: no conversions are registered,
 *       so they stay plain longs): JSON integer, printed exactly by Jackson;
 *   <li>bytes, fixed: standard base64 (RFC 4648, with padding);
 *   <li>union: null as null; any other branch wrapped as in Avro's JSON encoding,
 *       {@code {"<branch type name>": value}} (e.g. {@code {"long": 5}}, {@code {"bytes": "AAE="}}),
 *       so the branch Avro read is visible.
 * </ul>
 */
public final class DecodeEvents {
  private static final Pattern VERSIONED = Pattern.compile("^(.+)\\.v(\\d+)\\.avsc$");
  private static final JsonNodeFactory JSON = JsonNodeFactory.instance;
  private static final ObjectMapper MAPPER = new ObjectMapper();

  /**
   * GenericData, except that maps keep the order their entries were read in (Avro's reader
   * makes HashMaps), so that re-encoding a record can give back the very same bytes.
   */
  private static final GenericData MODEL = new GenericData() {
    @Override
    public DatumReader createDatumReader(Schema writer, Schema reader) {
      return new GenericDatumReader<Object>(writer, reader, this) {
        @Override
        protected Object newMap(Object old, int size) {
          return new LinkedHashMap<>(Math.max(16, size * 2));
        }
      };
    }
  };

  private DecodeEvents() {}

  private record Version(String file, int version, Schema schema, long fingerprint) {}

  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: DecodeEvents SCHEMA_DIR BIN_DIR");
      System.exit(2);
    }
    List<Version> versions = loadSchemas(Path.of(args[0]));
    SchemaStore.Cache store = new SchemaStore.Cache();
    Map<Long, Version> byFingerprint = new HashMap<>();
    Map<String, Version> newest = new TreeMap<>();
    for (Version v : versions) {
      store.addSchema(v.schema());
      if (byFingerprint.put(v.fingerprint(), v) != null) throw new IllegalStateException("two schemas share fingerprint of " + v.file());
      newest.merge(v.schema().getFullName(), v, (a, b) -> a.version() >= b.version() ? a : b);
    }
    Map<String, BinaryMessageDecoder<GenericRecord>> decoders = new TreeMap<>();
    for (Version v : newest.values()) {
      decoders.put(v.schema().getFullName(), new BinaryMessageDecoder<>(MODEL, v.schema(), store));
    }
    if (decoders.isEmpty()) throw new IllegalStateException("no *.avsc schemas in " + args[0]);

    PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
    int failed = 0;
    for (Path file : list(Path.of(args[1]), ".bin")) {
      ObjectNode line = JSON.objectNode();
      line.put("file", file.getFileName().toString());
      byte[] bytes = Files.readAllBytes(file);
      try {
        Version writer = peekWriter(bytes, byFingerprint);
        BinaryMessageDecoder<GenericRecord> decoder =
            writer == null ? decoders.values().iterator().next() : decoders.get(writer.schema().getFullName());
        GenericRecord record = decoder.decode(bytes);
        if (writer == null) throw new IllegalStateException("Avro decoded a record whose header runlog cannot name");
        Schema reader = record.getSchema();
        line.put("schema", reader.getFullName());
        line.put("writerSchema", writer.file());
        line.put("fingerprint", String.format("%016x", writer.fingerprint()));
        if (reader.equals(writer.schema())) {
          ByteBuffer again = new BinaryMessageEncoder<GenericRecord>(MODEL, writer.schema()).encode(record);
          line.put("reencodedIdentical", again.equals(ByteBuffer.wrap(bytes)));
        } else {
          line.putNull("reencodedIdentical");
        }
        line.set("record", toJson(reader, record));
      } catch (Exception e) {
        failed++;
        line.put("error", e.getClass().getName() + ": " + e.getMessage());
      }
      out.println(MAPPER.writeValueAsString(line));
    }
    out.flush();
    System.exit(failed == 0 ? 0 : 1);
  }

  private static List<Version> loadSchemas(Path dir) throws IOException {
    List<Version> versions = new ArrayList<>();
    for (Path file : list(dir, ".avsc")) {
      String name = file.getFileName().toString();
      Matcher m = VERSIONED.matcher(name);
      if (!m.matches()) throw new IllegalStateException("schema file not named <Type>.v<N>.avsc: " + name);
      // A parser per file: versions of one record share its full name.
      Schema schema = new Schema.Parser().parse(file.toFile());
      versions.add(new Version(name, Integer.parseInt(m.group(2)), schema, SchemaNormalization.parsingFingerprint64(schema)));
    }
    return versions;
  }

  private static List<Path> list(Path dir, String suffix) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(suffix)).sorted().toList();
    }
  }

  /** The writer schema the header names, or null when the header is not one runlog writes. */
  private static Version peekWriter(byte[] bytes, Map<Long, Version> byFingerprint) {
    if (bytes.length < 10 || bytes[0] != (byte) 0xC3 || bytes[1] != (byte) 0x01) return null;
    return byFingerprint.get(ByteBuffer.wrap(bytes, 2, 8).order(ByteOrder.LITTLE_ENDIAN).getLong());
  }

  private static JsonNode toJson(Schema schema, Object value) {
    switch (schema.getType()) {
      case RECORD: {
        GenericRecord record = (GenericRecord) value;
        ObjectNode node = JSON.objectNode();
        for (Schema.Field field : schema.getFields()) node.set(field.name(), toJson(field.schema(), record.get(field.pos())));
        return node;
      }
      case UNION: {
        if (value == null) return JSON.nullNode();
        Schema branch = schema.getTypes().get(MODEL.resolveUnion(schema, value));
        if (branch.getType() == Schema.Type.NULL) return JSON.nullNode();
        ObjectNode node = JSON.objectNode();
        node.set(branch.getFullName(), toJson(branch, value));
        return node;
      }
      case MAP: {
        ObjectNode node = JSON.objectNode();
        for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) node.set(e.getKey().toString(), toJson(schema.getValueType(), e.getValue()));
        return node;
      }
      case ARRAY: {
        ArrayNode node = JSON.arrayNode();
        for (Object item : (Collection<?>) value) node.add(toJson(schema.getElementType(), item));
        return node;
      }
      case STRING:
        return JSON.textNode(value.toString());
      case ENUM:
        return JSON.textNode(((GenericEnumSymbol<?>) value).toString());
      case BYTES: {
        ByteBuffer buffer = ((ByteBuffer) value).duplicate();
        byte[] bytes = new byte[buffer.remaining()];
        buffer.get(bytes);
        return JSON.textNode(Base64.getEncoder().encodeToString(bytes));
      }
      case FIXED:
        return JSON.textNode(Base64.getEncoder().encodeToString(((GenericFixed) value).bytes()));
      case INT:
        return JSON.numberNode((Integer) value);
      case LONG:
        return JSON.numberNode((Long) value);
      case FLOAT:
        return JSON.numberNode((Float) value);
      case DOUBLE:
        return JSON.numberNode((Double) value);
      case BOOLEAN:
        return JSON.booleanNode((Boolean) value);
      case NULL:
        return JSON.nullNode();
      default:
        throw new IllegalStateException("unexpected schema type " + schema.getType());
    }
  }
}
