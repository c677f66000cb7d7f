// npm run redis [-- --port N]: a Redis server on 127.0.0.1 for trying a sweep on one machine by
// hand (nothing persisted; Ctrl-C stops it and removes its folder). It prints the URL and the
// commands of a coordinator and a worker to run against it.
import { startRedis } from './redis-server.js';

const args = process.argv.slice(2);
const at = args.indexOf('--port');
const port = at >= 0 ? Number(args[at + 1]) : undefined;
if (
  (at >= 0 && !(Number.isInteger(port) && port! > 0 && port! < 65536)) ||
  args.some((a, i) => a !== '--port' && i !== at + 1)
) {
  process.stderr.write('usage: npm run redis [-- --port N]  (N a TCP port, 1-65535)\n');
  process.exit(2);
}
const redis = await startRedis(port === undefined ? {} : { port });
process.stdout.write(
  `Redis at ${redis.url} (pid ${redis.pid}); Ctrl-C stops it.\n\n  npm run compare -- worker --queue ${redis.url}\n  npm run compare -- --algos poad,ntpo --seeds 2 --queue ${redis.url}\n`,
);
let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  void redis.stop().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
