import { createServer } from 'node:net';

/** A TCP port on 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Free client and controller ports for each of count Kafka nodes (tests: nothing fixed, nothing shared). */
export async function freeKafkaAddresses(count: number): Promise<{ port: number; controllerPort: number }[]> {
  const addresses = [];
  for (let i = 0; i < count; i++) addresses.push({ port: await freePort(), controllerPort: await freePort() });
  return addresses;
}
