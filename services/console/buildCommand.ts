import { createLogger } from '../platform/logger.ts';
import { ensureConsoleBuilt } from './consoleBuild.ts';

/** `npm run build:console`: build the web console into `dist/console` (`--if-stale`: only when its inputs changed). */
const log = createLogger('console-build');
const result = await ensureConsoleBuilt(log, { force: !process.argv.includes('--if-stale') });
log.info({ result }, 'console build');
