import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import S3rver from 's3rver';

export interface LocalS3 {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly bucket: string;
  /** s3rver checks signatures made with these. */
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  close(): Promise<void>;
}

/**
 * A real S3-protocol server on 127.0.0.1 (s3rver, files in a temporary folder): the S3 store is
 * tested through the SDK, signatures and HTTP included, not against a mock of the SDK.
 */
export async function startLocalS3(bucket = 'vinhistory-test'): Promise<LocalS3> {
  const directory = mkdtempSync(path.join(tmpdir(), 'vinhistory-s3-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    accessKeyId: 'S3RVER',
    secretAccessKey: 'S3RVER',
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
