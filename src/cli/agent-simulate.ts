import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { authenticator } from 'otplib';
import type { Fixture } from '../seed/fixture.types';

/**
 * `npm run agent:simulate`: plays the agent of the demo device against a running service, through
 * the agent API an installed agent uses (docs/pam-lifecycle.md): it reports UAC prompts, holds a
 * wait on its command queue (`?wait=`), acknowledges each command on arrival and reports its result. Unless `--manual`, it also plays the demo
 * technician (password and TOTP of the demo tenant), approving each prompt that waits for a person
 * and actuating it, so a prompt goes from ingest to approval to actuation unattended. One line per
 * event; it stops after `--count` prompts.
 */

export interface SimulateOptions {
  url: string;
  agentId: string;
  token: string;
  count: number;
  /** Seconds between prompts. */
  intervalSeconds: number;
  /** Seconds to wait for a decision or a command before moving on. */
  waitSeconds: number;
  /** Leave pending prompts to a person instead of approving them as the demo technician. */
  manual: boolean;
  technician: { email: string; password: string; totpSecret?: string };
  log: (line: string) => void;
}

export interface SimulatedPrompt {
  name: string;
  requestId: string | null;
  status: string;
  /** The status after approval and actuation (the same as `status` when nothing followed). */
  finalStatus: string;
  commandId?: string;
  /** From the approval's answer to the command's arrival at the agent, in milliseconds (the simulator approving). */
  approvalToDeviceMs?: number;
  /** From the actuation's answer (the command committed) to its arrival at the agent. */
  actuationToDeviceMs?: number;
}

/** The longest wait the simulator holds on its command queue at a time (the service accepts up to 60 s). */
const HELD_WAIT_SECONDS = 25;

/** What a clinic's workstation asks for in a day, and the demo rule that decides it. */
export const PROMPTS: { name: string; body: Record<string, unknown> }[] = [
  {
    name: 'Zoom installer (trusted vendor: approved by rule)',
    body: {
      subject_username: 'CONTOSO\\drsmith',
      target_executable_path: 'C:\\Program Files\\Zoom\\bin\\Installer.exe',
      target_executable_hash: 'E8AA7B7B5AEC9F0025E37D4E856558BE6C39A4EF9FF0085E4409661ECCB7EE6B',
      target_executable_signer: 'Zoom Video Communications, Inc.',
      parent_image: 'C:\\Program Files\\Zoom\\bin\\Zoom.exe',
      command_line: '"C:\\Program Files\\Zoom\\bin\\Installer.exe" /silent /update',
    },
  },
  {
    name: 'PowerShell as administrator (needs a technician)',
    body: {
      subject_username: 'CONTOSO\\hygienist1',
      target_executable_path: 'C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe',
      target_executable_hash: 'b90cba15be130339f4cc28073c2a5f8487fe9f8000ec1f1ed4be6f36923fc87e',
      target_executable_signer: 'Microsoft Windows',
      parent_image: 'C:\\Windows\\explorer.exe',
      command_line: 'powershell.exe -ExecutionPolicy Bypass -File \\\\fs01\\it\\map-printers.ps1',
    },
  },
  {
    name: 'AnyDesk from Downloads (denied by rule)',
    body: {
      subject_username: 'CONTOSO\\officemgr',
      target_executable_path: 'C:\\Users\\officemgr\\Downloads\\AnyDesk.exe',
      target_executable_hash: 'e507217d56b0c262ae21e436e450241ffa96235b71a52bd33fdabac5e223b669',
      target_executable_signer: 'AnyDesk Software GmbH',
      parent_image: 'C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe',
    },
  },
  {
    name: 'Windows Update servicing stack (ignored by rule)',
    body: {
      subject_username: 'NT AUTHORITY\\SYSTEM',
      target_executable_path: 'C:\\Windows\\SoftwareDistribution\\Download\\Install\\windows10.0-kb5034441-x64.exe',
      target_executable_hash: 'bed45323f0d98cdabd1acc0a97a9c8ef6b122a3c0ec096073acce583b0d00bc8',
      target_executable_signer: 'Microsoft Windows',
      parent_image: 'C:\\Windows\\System32\\svchost.exe',
    },
  },
  {
    name: 'Label printer driver setup (no rule: the organization default asks a technician)',
    body: {
      subject_username: 'CONTOSO\\frontdesk',
      target_executable_path: 'C:\\Program Files (x86)\\LabelWriter\\DLS8Setup.exe',
      target_executable_hash: '4e5f61a3ea8442f07d053db7bbaaf2da1453ef8656f5226028583321fe71adc3',
      target_executable_signer: 'Sanford, L.P.',
      parent_image: 'C:\\Windows\\explorer.exe',
    },
  },
  {
    name: 'DEXIS imaging updater at HQ (approved by rule)',
    body: {
      subject_username: 'CONTOSO\\hygienist1',
      target_executable_path: 'C:\\Program Files\\DEXIS\\Updater\\DexisUpdate.exe',
      target_executable_hash: '8080590f72d0dce1d2faf52ed029bd3404884b815af2a06345224df81de8f256',
      target_executable_signer: 'Dental Imaging Technologies Corporation',
      parent_image: 'C:\\Program Files\\DEXIS\\DEXIS.exe',
    },
  },
];

interface Answer {
  status: number;
  body: Record<string, unknown>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function call(url: string, method: string, bearer: string | null, body?: unknown, signal?: AbortSignal): Promise<Answer> {
  const res = await fetch(url, {
    method,
    signal,
    headers: { ...(bearer ? { authorization: `Bearer ${bearer}` } : {}), ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { message: text.slice(0, 200) };
  }
  return { status: res.status, body: parsed };
}

const why = (a: Answer) => `${a.status}${a.body.code ? ` ${String(a.body.code)}` : ''}${a.body.message ? `: ${String(a.body.message)}` : ''}`;

/** Signs the technician in, with a TOTP code when the account has MFA (waits for the next code once if this one was used). */
async function signIn(api: string, t: SimulateOptions['technician']): Promise<string> {
  const login = await call(`${api}/auth/login`, 'POST', null, { email: t.email, password: t.password });
  if (login.status !== 200 && login.status !== 201) throw new Error(`technician sign-in failed (${why(login)})`);
  if (!login.body.mfaRequired) return String(login.body.accessToken);
  if (!t.totpSecret) throw new Error('the technician account asks for an MFA code: pass --totp-secret');
  for (let attempt = 0; ; attempt++) {
    const verify = await call(`${api}/auth/mfa/verify`, 'POST', null, { mfaToken: login.body.mfaToken, code: authenticator.generate(t.totpSecret) });
    if (verify.status === 200 || verify.status === 201) return String(verify.body.accessToken);
    if (attempt > 0 || verify.body.code !== 'invalid_mfa_code') throw new Error(`technician MFA failed (${why(verify)})`);
    await sleep((30 - (Math.floor(Date.now() / 1000) % 30) + 1) * 1000);
  }
}

/** Reports the prompts, one line per event; resolves with what happened to each. */
export async function simulate(o: SimulateOptions): Promise<SimulatedPrompt[]> {
  const api = `${o.url.replace(/\/+$/, '')}/api/v1`;
  const agentApi = `${api}/agents/${o.agentId}`;
  const stamp = () => new Date().toISOString().slice(11, 19);
  const log = (line: string) => o.log(`${stamp()}  ${line}`);
  const settings = await call(`${agentApi}/pam-settings`, 'GET', o.token);
  if (settings.status !== 200) throw new Error(`the agent cannot reach ${agentApi} (${why(settings)}): check --url, --agent-id and --token`);
  log(`agent ${o.agentId} connected to ${o.url}; UAC interception ${settings.body.uacInterceptionEnabled ? 'on' : 'off'}`);
  const technician = o.manual ? null : await signIn(api, o.technician);
  if (technician) log(`technician ${o.technician.email} signed in; prompts that wait for a person are approved and actuated`);

  /**
   * Holds waits on the command queue until the command for `requestId` arrives; acknowledges and
   * reports every command it gets (a command delivered twice, after a lost acknowledgement, is
   * recognised by its id and only acknowledged again). Resolves with the command id and its arrival time.
   */
  const handled = new Set<string>();
  const awaitCommand = async (requestId: string, signal?: AbortSignal): Promise<{ id: string; at: number } | undefined> => {
    const until = Date.now() + o.waitSeconds * 1000;
    while (Date.now() < until && !signal?.aborted) {
      const wait = Math.max(1, Math.min(HELD_WAIT_SECONDS, Math.ceil((until - Date.now()) / 1000)));
      const polled = await call(`${agentApi}/commands?wait=${wait}`, 'GET', o.token, undefined, signal).catch((err: Error) => {
        if (signal?.aborted) return null;
        throw err;
      });
      if (!polled) return undefined;
      const at = Date.now();
      if (polled.status !== 200) throw new Error(`command wait failed (${why(polled)})`);
      if (typeof polled.body.reconnectAfterMs === 'number') {
        log(`  the service is stopping: reconnecting in ${polled.body.reconnectAfterMs} ms`);
        await sleep(polled.body.reconnectAfterMs);
        continue;
      }
      let mine: { id: string; at: number } | undefined;
      for (const c of (polled.body.commands ?? []) as { id: string; type: string; payload: { elevationRequestId?: string } }[]) {
        await call(`${agentApi}/commands/${c.id}/ack`, 'POST', o.token);
        if (handled.has(c.id)) continue;
        handled.add(c.id);
        log(`  command ${c.type} ${c.id} received`);
        const reported = await call(`${agentApi}/commands/${c.id}/result`, 'POST', o.token, { status: 'completed' });
        log(`  reported ${c.type} completed (${reported.status === 200 ? 'accepted' : why(reported)})`);
        if (c.payload.elevationRequestId === requestId && c.type === 'actuate_elevation') mine = { id: c.id, at };
      }
      if (mine) return mine;
    }
    return undefined;
  };

  const results: SimulatedPrompt[] = [];
  for (let i = 0; i < o.count; i++) {
    if (i > 0) await sleep(o.intervalSeconds * 1000);
    const p = PROMPTS[i % PROMPTS.length];
    const ingest = await call(`${agentApi}/elevation-requests`, 'POST', o.token, { ...p.body, pid: 4000 + i, observed_at: new Date().toISOString() });
    if (ingest.status !== 200 && ingest.status !== 201) {
      log(`prompt ${i + 1}/${o.count}  ${p.name}: refused (${why(ingest)})`);
      results.push({ name: p.name, requestId: null, status: `error ${ingest.status}`, finalStatus: `error ${ingest.status}` });
      continue;
    }
    const requestId = (ingest.body.id as string | null) ?? null;
    const status = String(ingest.body.status);
    log(`prompt ${i + 1}/${o.count}  ${p.name}: ${status}${requestId ? ` (request ${requestId})` : ''}`);
    const result: SimulatedPrompt = { name: p.name, requestId, status, finalStatus: status };
    results.push(result);
    if (status !== 'pending' || !requestId) continue;

    if (!technician) {
      log(`  waiting up to ${o.waitSeconds} s for a technician to approve and actuate it`);
      result.commandId = (await awaitCommand(requestId))?.id;
      result.finalStatus = result.commandId ? 'actuating' : 'pending';
      if (!result.commandId) log('  no actuation arrived; moving on');
      continue;
    }
    // The agent holds its wait while the technician decides, as an installed agent does: the command arrives on it.
    const giveUp = new AbortController();
    const arriving = awaitCommand(requestId, giveUp.signal);
    const approved = await call(`${api}/pam/elevation-requests/${requestId}/respond`, 'POST', technician, {
      decision: 'approve',
      durationMinutes: 15,
      reason: 'Approved by the agent simulator',
    });
    if (approved.status !== 200) {
      log(`  approval refused (${why(approved)})`);
      giveUp.abort();
      await arriving;
      continue;
    }
    const approvedAt = Date.now();
    result.finalStatus = 'approved';
    log(`  approved by ${o.technician.email} for 15 minutes`);
    const detail = await call(`${api}/pam/elevation-requests/${requestId}`, 'GET', technician);
    const deviceId = (detail.body.request as { deviceId?: string } | undefined)?.deviceId;
    const actuated = await call(`${api}/devices/${deviceId}/actuate-elevation`, 'POST', technician, { elevationRequestId: requestId });
    if (actuated.status !== 201) {
      log(`  actuation refused (${why(actuated)})${actuated.body.code === 'pam_actuator_disabled' ? ': start the service with PAM_ACTUATOR_ENABLED=true' : ''}`);
      giveUp.abort();
      await arriving;
      continue;
    }
    const actuatedAt = Date.now();
    log(`  actuation queued (command ${String(actuated.body.commandId)})`);
    const arrived = await arriving;
    result.commandId = arrived?.id;
    if (arrived) {
      result.finalStatus = 'actuating';
      result.approvalToDeviceMs = arrived.at - approvedAt;
      result.actuationToDeviceMs = Math.max(0, arrived.at - actuatedAt);
      log(`  approval to device: ${result.approvalToDeviceMs} ms (the command reached the agent ${result.actuationToDeviceMs} ms after the actuation was committed)`);
    } else log('  the command did not arrive in time');
  }
  const counts = results.reduce<Record<string, number>>((acc, r) => ({ ...acc, [r.finalStatus]: (acc[r.finalStatus] ?? 0) + 1 }), {});
  log(`done: ${results.length} prompts (${Object.entries(counts).map(([s, n]) => `${n} ${s}`).join(', ')}); see GET ${api}/pam/elevation-requests and ${api}/audit-logs`);
  return results;
}

/** The demo device and technician, from the demo tenant the service seeds outside production. */
function demoDefaults(): { agentId?: string; token?: string; email?: string; password?: string; totpSecret?: string } {
  try {
    const fixture = JSON.parse(readFileSync(join(__dirname, '../seed/demo.json'), 'utf8')) as Fixture;
    const device = fixture.devices?.find((d) => d.agentId && d.agentToken);
    const tech = fixture.users?.find((u) => u.partnerMembership && u.password);
    return { agentId: device?.agentId, token: device?.agentToken, email: tech?.email, password: tech?.password, totpSecret: tech?.totpSecret };
  } catch {
    return {};
  }
}

const USAGE = `usage: npm run agent:simulate -- [--url http://localhost:3000] [--agent-id <uuid>] [--token <agent token>]
       [--count 6] [--interval 2] [--wait 60] [--manual]
       [--technician-email <email>] [--technician-password <password>] [--totp-secret <base32>]`;

function boundedNumber(raw: string | undefined, name: string, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || n > max) throw new Error(`--${name} must be a number from ${min} to ${max}`);
  return n;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      url: { type: 'string' },
      'agent-id': { type: 'string' },
      token: { type: 'string' },
      count: { type: 'string' },
      interval: { type: 'string' },
      wait: { type: 'string' },
      manual: { type: 'boolean' },
      'technician-email': { type: 'string' },
      'technician-password': { type: 'string' },
      'totp-secret': { type: 'string' },
      help: { type: 'boolean' },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  const demo = demoDefaults();
  const agentId = values['agent-id'] ?? demo.agentId;
  const token = values.token ?? demo.token;
  if (!agentId || !token) throw new Error(`no demo device found: pass --agent-id and --token\n${USAGE}`);
  const email = values['technician-email'] ?? demo.email;
  const password = values['technician-password'] ?? demo.password;
  if (!values.manual && (!email || !password)) throw new Error('no demo technician found: pass --technician-email and --technician-password, or --manual');
  await simulate({
    url: values.url ?? 'http://localhost:3000',
    agentId,
    token,
    count: Math.round(boundedNumber(values.count, 'count', PROMPTS.length, 1, 100)),
    intervalSeconds: boundedNumber(values.interval, 'interval', 2, 0, 60),
    waitSeconds: boundedNumber(values.wait, 'wait', 60, 1, 600),
    manual: !!values.manual,
    technician: { email: email ?? '', password: password ?? '', totpSecret: values['totp-secret'] ?? (values['technician-email'] ? undefined : demo.totpSecret) },
    log: (line) => process.stdout.write(line + '\n'),
  });
}

if (require.main === module) {
  main().catch((err) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  });
}
