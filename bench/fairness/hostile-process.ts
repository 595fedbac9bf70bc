// The hostile tenant in a process of its own (bench/fairness/main.ts forks it): building and
// sending megabytes of requests must not stall the event loop that measures the normal tenant.
// argv: <class> <target JSON>; message 'stop' → sends back how its requests ended, then exits.
import { startHostile, type HostileClass } from './hostile';

const [kind, target] = process.argv.slice(2);
const hostile = startHostile(kind as HostileClass, JSON.parse(target));
process.send?.({ started: true });
process.on('message', (message) => {
  if (message !== 'stop') return;
  void hostile.stop().then((outcomes) => {
    process.send?.({ outcomes }, () => process.exit(0));
  });
});
// The bench gone, nothing else keeps this process: exit with it.
process.on('disconnect', () => process.exit(0));
