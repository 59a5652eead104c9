// A deployment config: copy it to the directory `npm start` runs in as `better-compute.config.ts` (or point
// BC_CONFIG at it). Environment variables still override what it sets; `better-compute doctor` reports what is wrong.
import { defineConfig } from 'better-compute/config';

export default defineConfig({
  // The API listens on every interface behind a TLS-terminating proxy, which machines and people reach it through.
  httpHost: '0.0.0.0',
  httpPort: 8080,
  publicUrl: 'https://bc.example.net',
  // Broker permissions per role (the default, said out loud): never `none` in production.
  natsAuth: 'operator',
  processLayout: 'compact',
  // A plugin the stack runs under its supervisor (a VPS provider, an autoinstall step).
  plugins: ['plugins/acme-autoinstall/index.ts'],
  simMachines: 0,
  logLevel: 'info',
});
