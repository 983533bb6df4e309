import { FakeApis } from './fake-apis';

/**
 * The fake provider APIs in their own process, so serving replies does not take CPU from the
 * load generator. The bench reads deliveries over `/__deliveries` and waits with `/__wait`.
 */
async function main(): Promise<void> {
  const fakes = new FakeApis();
  await fakes.start();
  process.stdout.write(`PORT ${fakes.port}\n`);
}

main().catch((err) => {
  process.stderr.write(String(err));
  process.exit(1);
});
