import { defineConfig } from 'vitest/config';

// Integration and e2e files each start their own nats-server; two cores cannot run many at once.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
  },
});
