/**
 * A self-signed certificate for 127.0.0.1 and localhost, made by the openssl command line
 * (node:crypto makes keys but not X.509 certificates) into `dir`: cert.pem and key.pem.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export interface SelfSigned {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
}

export function selfSigned(dir: string, name = 'tls'): SelfSigned {
  const [certFile, keyFile] = [join(dir, `${name}-cert.pem`), join(dir, `${name}-key.pem`)];
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ],
    { stdio: 'pipe' },
  );
  return { certFile, keyFile, cert: readFileSync(certFile), key: readFileSync(keyFile) };
}
