import { PrismaPg } from '@prisma/adapter-pg';
import { defineConfig } from 'prisma/config';

// Prisma CLI configuration (generate, migrate deploy, migrate diff).
//
// `engine: 'js'` + a driver adapter makes the CLI use the WASM schema engine and talk to
// Postgres through node-postgres: nothing is downloaded at install or migrate time, which is
// what lets an offline/self-hosted install work. DATABASE_URL is read lazily inside
// adapter() so `prisma generate` (run by postinstall) works without a database.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  experimental: { adapter: true },
  engine: 'js',
  async adapter() {
    const connectionString = process.env['DATABASE_URL'];
    if (!connectionString) {
      throw new Error('DATABASE_URL is not set: the Prisma CLI needs it to reach the database.');
    }
    // allowExitOnIdle: the CLI never closes this pool, and pg's idle timer (10 s) would
    // otherwise keep every `migrate deploy` alive for 10 s after it has finished.
    return new PrismaPg({ connectionString, allowExitOnIdle: true });
  },
});
