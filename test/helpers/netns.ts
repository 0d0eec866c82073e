/**
 * Test hosts of their own on one machine: Linux network namespaces, each joined to this (the
 * root) namespace by a veth pair on a /30 of its own (toolchain.md section 7: works as root
 * here). A process started in a namespace (`ip netns exec`, test/helpers/processes.ts `netns`)
 * has its own loopback and reaches only its link's other end — a server here listening on
 * `gateway` — as a process on another machine would over the network.
 */
import { execFileSync } from 'node:child_process';

/** One test host. */
export interface TestHost {
  /** The namespace's name (`ip netns exec <ns> …`). */
  ns: string;
  /** Its address, and the address of this namespace's end of its link (where it reaches servers here). */
  address: string;
  gateway: string;
}

/** Test hosts and how to remove them. */
export interface TestHosts {
  hosts: TestHost[];
  /** Deletes the namespaces and their links (a namespace's processes should be gone first). Safe to call twice. */
  remove(): void;
}

const ip = (...args: string[]): void => void execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });

/**
 * Creates `count` hosts: namespace `rn<tag>h<i>`, veth `rv<tag>h<i>` here and `eth0` there,
 * addresses `10.231.<i>.2/30` there and `10.231.<i>.1/30` here.
 *
 * @throws Error when not root or `ip` fails (the message names the command's complaint).
 */
export function createHosts(count: number): TestHosts {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    throw new Error('network namespaces need root (CI runs as root): run this test as root');
  }
  const tag = String(process.pid % 100_000);
  const hosts: TestHost[] = [];
  const made: { ns: string; veth: string }[] = [];
  const remove = () => {
    for (const m of made.splice(0)) {
      try {
        ip('link', 'del', m.veth);
      } catch {
        // gone with its namespace
      }
      try {
        ip('netns', 'del', m.ns);
      } catch {
        // already removed
      }
    }
  };
  try {
    for (let i = 1; i <= count; i++) {
      const ns = `rn${tag}h${i}`;
      const veth = `rv${tag}h${i}`;
      const peer = `rp${tag}h${i}`;
      const gateway = `10.231.${i}.1`;
      const address = `10.231.${i}.2`;
      ip('netns', 'add', ns);
      made.push({ ns, veth });
      ip('link', 'add', veth, 'type', 'veth', 'peer', 'name', peer);
      ip('link', 'set', peer, 'netns', ns);
      ip('addr', 'add', `${gateway}/30`, 'dev', veth);
      ip('link', 'set', veth, 'up');
      ip('-n', ns, 'link', 'set', peer, 'name', 'eth0');
      ip('-n', ns, 'addr', 'add', `${address}/30`, 'dev', 'eth0');
      ip('-n', ns, 'link', 'set', 'eth0', 'up');
      ip('-n', ns, 'link', 'set', 'lo', 'up');
      hosts.push({ ns, address, gateway });
    }
  } catch (err) {
    remove();
    const stderr = (err as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`could not create test hosts: ${stderr || (err as Error).message}`, { cause: err });
  }
  return { hosts, remove };
}
