/**
 * `npm run ensure:chromium`, and the `pretest` of `npm test` and of `npm run test:e2e`: makes sure
 * the end-to-end tests have a Chromium before anything runs (scripts/chromium.ts decides).
 *
 * Present: one line naming it. Missing, as root with apt-get: says so, runs
 * `apt-get update && apt-get install -y chromium`, and checks again. Missing otherwise: one
 * message naming the command to run, exit code 1, at once (not 13 failing end-to-end files later).
 * `.ci/run` calls it too, so the install lives in one place.
 */
import { spawnSync } from 'node:child_process';
import { chromiumPlan, findChromium, missingChromiumMessage } from './chromium';

const PREFIX = 'ensure-chromium:';

function main(): number {
  const plan = chromiumPlan();
  if (plan.action === 'present') {
    console.log(`${PREFIX} using ${plan.path}`);
    return 0;
  }
  if (plan.action === 'fail') {
    console.error(`${PREFIX} ${plan.message}`);
    return 1;
  }
  console.log(`${PREFIX} ${plan.announcement}`);
  for (const [command, ...args] of plan.commands) {
    const run = spawnSync(command!, args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    if (run.status !== 0) {
      const how = run.error ? run.error.message : run.signal ? `signal ${run.signal}` : `exit code ${run.status}`;
      console.error(`${PREFIX} \`${[command, ...args].join(' ')}\` failed (${how}); install Chromium by hand, or set CHROMIUM_PATH.`);
      return 1;
    }
  }
  const after = findChromium();
  if ('missing' in after) {
    console.error(`${PREFIX} installed, yet ${missingChromiumMessage(after.missing)}`);
    return 1;
  }
  console.log(`${PREFIX} installed ${after.path}`);
  return 0;
}

process.exitCode = main();
