#!/usr/bin/env node
// tink_agent.js — the second, independent test client of the worker
// protocol: @grpc/grpc-js (its own HTTP/2 and gRPC, not grpcio's C core)
// with @grpc/proto-loader reading common/tink.proto when it runs. It plays
// tink-agent exactly as tests/grpc/tink_agent.py does, with the same flags,
// the same script and the same JSON lines on stdout, so one test can run
// both and compare:
//
//   node tink_agent.js --target 127.0.0.1:42113 --agent-id ID \
//       [--script JSON|@FILE] [--until-done] [--max-calls N] [--max-actions N]
//       [--poll S] [--rpc-timeout S] [--tls-ca PEM] [--tls-name NAME]
//       [--metadata K=V]... [--attributes default|JSON|@FILE] [--report-retries N]
//   node tink_agent.js raw --target HOST:PORT --method GetAction \
//       (--hex BYTES | --json OBJ) [--timeout S] [--metadata K=V]...
//
// The script: {"default": STEP, "actions": {"<name>": STEP}, "steps": [STEP]}
// (see tink_agent.py for STEP).
'use strict';

const fs = require('fs');
const path = require('path');

// The modules: build-node/node_modules at the top of the tree, where
// tools/install-deps installs them (npm ci from tests/grpc/package-lock.json),
// or the directory $IRONBELL_NODE_MODULES names.
module.paths.unshift(
  process.env.IRONBELL_NODE_MODULES ||
    path.join(path.resolve(process.env.top_srcdir || path.join(__dirname, '..', '..')), 'build-node', 'node_modules'),
);
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const protobufjs = require('protobufjs');

const BACKOFF_MAX = 5.0; // tink-agent polls again at most 5 s later
const GO_ZERO_TIME = -62135596800; // Go's time.Time{} as a Timestamp's seconds
const RESULTS = ['success', 'failed', 'timeout', 'none', 'twice'];
// The codes tink-agent does not report again (backoff.Permanent upstream).
const REPORT_PERMANENT = ['NOT_FOUND', 'INVALID_ARGUMENT', 'FAILED_PRECONDITION'];
const STATES = { UNSPECIFIED: 0, PENDING: 1, RUNNING: 2, FAILED: 3, TIMEOUT: 4, SUCCESS: 5 };
const CODE_NAMES = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

function out(obj) {
  // Sorted keys, as the Python client prints them.
  const sorted = (v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, sorted(v[k])]))
      : Array.isArray(v) ? v.map(sorted) : v;
  process.stdout.write(JSON.stringify(sorted(obj)) + '\n');
}

function die(msg) {
  process.stderr.write('tink_agent.js: ' + msg + '\n');
  process.exit(1);
}

function parseArgs(argv) {
  const a = {
    mode: 'agent', target: '127.0.0.1:42113', agentId: '52:54:00:12:34:56', script: '',
    maxCalls: 100, maxActions: 0, untilDone: false, poll: 0.2, rpcTimeout: 10.0,
    tlsCa: null, tlsName: null, metadata: [], method: 'GetAction', hex: null, json: null,
    timeout: null, reportRetries: 0, attributes: '',
  };
  let i = 0;
  if (argv[0] === 'raw') {
    a.mode = 'raw';
    i = 1;
  }
  const need = (k) => {
    if (i + 1 >= argv.length) die(k + ' wants a value');
    return argv[++i];
  };
  const num = (k) => {
    const v = Number(need(k));
    if (!Number.isFinite(v)) die(k + ' wants a number');
    return v;
  };
  for (; i < argv.length; i++) {
    const k = argv[i];
    switch (k) {
      case '--target': a.target = need(k); break;
      case '--agent-id': a.agentId = need(k); break;
      case '--script': a.script = need(k); break;
      case '--max-calls': a.maxCalls = num(k); break;
      case '--max-actions': a.maxActions = num(k); break;
      case '--until-done': a.untilDone = true; break;
      case '--poll': a.poll = num(k); break;
      case '--rpc-timeout': a.rpcTimeout = num(k); break;
      case '--tls-ca': a.tlsCa = need(k); break;
      case '--tls-name': a.tlsName = need(k); break;
      case '--metadata': a.metadata.push(need(k)); break;
      case '--method': a.method = need(k); break;
      case '--hex': a.hex = need(k); break;
      case '--json': a.json = need(k); break;
      case '--timeout': a.timeout = num(k); break;
      case '--report-retries': a.reportRetries = num(k); break;
      case '--attributes': a.attributes = need(k); break;
      // The Python client's stub directory: the same command line works
      // for both; this one reads the .proto itself.
      case '--stubs': need(k); break;
      default: die('unknown argument ' + k);
    }
  }
  if (!(a.maxCalls >= 1 && a.maxCalls <= 100000)) die('--max-calls is 1..100000');
  if (!(a.reportRetries >= 0 && a.reportRetries <= 100)) die('--report-retries is 0..100');
  a.poll = Math.min(Math.max(a.poll, 0), BACKOFF_MAX);
  return a;
}

function loadScript(text) {
  if (!text) return {};
  if (text.startsWith('@')) text = fs.readFileSync(text.slice(1), 'utf8');
  const s = JSON.parse(text);
  if (!s || typeof s !== 'object' || Array.isArray(s)) die('the script is a JSON object');
  const all = [...(s.steps || []), ...Object.values(s.actions || {}), s.default || {}];
  for (const st of all) {
    const r = st.result || 'success';
    if (!RESULTS.includes(r)) die('result ' + r + ' is not one of ' + RESULTS.join(', '));
  }
  return s;
}

// --attributes: '' (none), 'default' (tests/grpc/attributes.json) or JSON
// or @FILE with AgentAttributes' field names.
function loadAttributes(text) {
  if (!text) return null;
  if (text === 'default') text = '@' + path.join(__dirname, 'attributes.json');
  if (text.startsWith('@')) text = fs.readFileSync(text.slice(1), 'utf8');
  return JSON.parse(text);
}

function stepFor(script, n, name) {
  const steps = script.steps || [];
  if (n < steps.length) return steps[n];
  const actions = script.actions || {};
  if (Object.prototype.hasOwnProperty.call(actions, name)) return actions[name];
  return script.default || { result: 'success' };
}

function goDuration(seconds) {
  if (seconds < 1) return Math.round(seconds * 1000) + 'ms';
  const trim = (x) => x.toFixed(3).replace(/0+$/, '').replace(/\.$/, '');
  if (seconds < 60) return trim(seconds) + 's';
  return Math.floor(seconds / 60) + 'm' + trim(seconds % 60) + 's';
}

function timestamp(ms) {
  return { seconds: Math.floor(ms / 1000), nanos: Math.round((ms % 1000) * 1e6) };
}

function protoDir() {
  const top = process.env.top_srcdir || path.join(__dirname, '..', '..');
  return path.join(path.resolve(top), 'common');
}

function load() {
  const dir = protoDir();
  const def = protoLoader.loadSync(path.join(dir, 'tink.proto'), {
    includeDirs: [dir], keepCase: true, longs: Number, enums: String, defaults: true,
    oneofs: true,
  });
  return grpc.loadPackageDefinition(def).proto;
}

function credentials(a) {
  if (!a.tlsCa) return { creds: grpc.credentials.createInsecure(), options: {} };
  const options = a.tlsName ? { 'grpc.ssl_target_name_override': a.tlsName } : {};
  return { creds: grpc.credentials.createSsl(fs.readFileSync(a.tlsCa)), options };
}

function metadata(a) {
  const md = new grpc.Metadata();
  for (const kv of a.metadata) {
    const j = kv.indexOf('=');
    if (j < 0) die('--metadata wants KEY=VALUE, not ' + kv);
    md.add(kv.slice(0, j).toLowerCase(), kv.slice(j + 1));
  }
  return md;
}

function deadline(seconds) {
  return new Date(Date.now() + seconds * 1000);
}

// One unary call: {resp, code, details}, never a rejection.
function call(client, method, req, a) {
  return new Promise((resolve) => {
    client[method](req, metadata(a), { deadline: deadline(a.rpcTimeout) }, (err, resp) => {
      if (err) resolve({ resp: null, code: err.code, details: err.details || '' });
      else resolve({ resp, code: grpc.status.OK, details: '' });
    });
  });
}

const sleep = (s) => new Promise((r) => setTimeout(r, s * 1000));

function actionDict(r) {
  const ns = r.namespaces || {};
  return {
    workflow_id: r.workflow_id, task_id: r.task_id, agent_id: r.agent_id,
    action_id: r.action_id, name: r.name, image: r.image, timeout: Number(r.timeout),
    command: r.command || [], volumes: r.volumes || [], environment: r.environment || [],
    pid: r.pid, namespaces: { network: ns.network || '', pid: ns.pid || '' },
  };
}

async function report(client, a, action, step, state, start, stop, message) {
  const pick = (k, dflt) => (Object.prototype.hasOwnProperty.call(step, k) ? step[k] : dflt);
  const req = {
    workflow_id: pick('workflow_id', action.workflow_id),
    agent_id: pick('agent_id', action.agent_id || a.agentId),
    task_id: pick('task_id', action.task_id),
    action_id: pick('action_id', action.action_id),
    action_name: pick('action_name', action.name),
    action_state: state,
    execution_start: timestamp(start),
  };
  // As tink-agent: the agent_id the action came with, a stop time of Go's
  // zero time.Time (a negative seconds) while RUNNING, and a message
  // always there, empty or not.
  if (stop !== null) {
    req.execution_stop = timestamp(stop);
    req.execution_duration = pick('duration', goDuration((stop - start) / 1000));
  } else {
    req.execution_stop = { seconds: GO_ZERO_TIME, nanos: 0 };
  }
  req.message = { message: message || '' };
  // As tink-agent: a report is tried again with backoff unless it
  // succeeded or the code is one of the permanent ones; here at most
  // --report-retries times.
  let backoff = a.poll;
  let r = null;
  for (let attempt = 0; attempt <= a.reportRetries; attempt++) {
    r = await call(client, 'ReportActionStatus', req, a);
    const name = CODE_NAMES[r.code] || 'UNKNOWN';
    out({
      call: 'ReportActionStatus', state, workflow_id: req.workflow_id, task_id: req.task_id,
      action_id: req.action_id, action_name: req.action_name, agent_id: req.agent_id,
      attempt: attempt + 1, code: name, details: r.details,
    });
    if (r.code === grpc.status.OK || REPORT_PERMANENT.includes(name)) break;
    if (attempt < a.reportRetries) {
      await sleep(backoff);
      backoff = Math.min(backoff * 2, BACKOFF_MAX);
    }
  }
  return r.code;
}

async function runAction(client, a, action, step) {
  const start = Date.now();
  if (step.running !== false)
    await report(client, a, action, step, 'RUNNING', start, null, step.running_message || '');
  if (step.sleep) await sleep(Number(step.sleep));
  const result = step.result || 'success';
  if (result === 'none') return;
  const state = { success: 'SUCCESS', failed: 'FAILED', timeout: 'TIMEOUT', twice: 'SUCCESS' }[result];
  const dflt = { SUCCESS: '', FAILED: 'exit status 1', TIMEOUT: 'action timed out' }[state];
  const msg = Object.prototype.hasOwnProperty.call(step, 'message') ? step.message : dflt;
  const stop = Date.now();
  await report(client, a, action, step, state, start, stop, msg);
  if (result === 'twice') await report(client, a, action, step, state, start, stop, msg);
}

async function agent(a) {
  const script = loadScript(a.script);
  const attributes = loadAttributes(a.attributes);
  const pkg = load();
  const { creds, options } = credentials(a);
  const client = new pkg.WorkflowService(a.target, creds, options);
  let handed = 0;
  let reason = 'max-calls';
  let backoff = a.poll;
  for (let n = 0; n < a.maxCalls; n++) {
    const req = { agent_id: a.agentId };
    if (attributes) req.agent_attributes = attributes;
    const r = await call(client, 'GetAction', req, a);
    const line = { call: 'GetAction', agent_id: a.agentId, code: CODE_NAMES[r.code] || 'UNKNOWN', details: r.details };
    if (r.resp) line.action = actionDict(r.resp);
    out(line);
    if (r.code === grpc.status.OK) {
      backoff = a.poll;
      const step = stepFor(script, handed, r.resp.name);
      handed++;
      await runAction(client, a, r.resp, step);
      if (step.stop) { reason = 'stop'; break; }
      if (a.maxActions && handed >= a.maxActions) { reason = 'max-actions'; break; }
      continue;
    }
    if (r.code === grpc.status.NOT_FOUND && a.untilDone && handed > 0) { reason = 'done'; break; }
    // NOT_FOUND (no workflow), FAILED_PRECONDITION (not yet) and the
    // transient codes: back off and poll again, at most 5 s.
    await sleep(backoff);
    backoff = Math.min(backoff * 2, BACKOFF_MAX);
  }
  out({ call: 'end', reason, actions: handed });
  client.close();
}

const METHODS = {
  GetAction: ['ActionRequest', 'ActionResponse'],
  ReportActionStatus: ['ActionStatusRequest', 'ActionStatusResponse'],
};

async function raw(a) {
  let body = Buffer.alloc(0);
  if (a.hex !== null) {
    body = Buffer.from(a.hex, 'hex');
  } else if (a.json !== null) {
    if (!METHODS[a.method]) die('--json needs a method of WorkflowService');
    // protobufjs (what proto-loader is built on) encodes the JSON.
    const root = new protobufjs.Root();
    root.resolvePath = (origin, target) => path.join(protoDir(), target);
    root.loadSync('tink.proto', { keepCase: true });
    const T = root.lookupType('proto.' + METHODS[a.method][0]);
    body = Buffer.from(T.encode(T.fromObject(JSON.parse(a.json))).finish());
  }
  const p = a.method.startsWith('/') ? a.method : '/proto.WorkflowService/' + a.method;
  const { creds, options } = credentials(a);
  const client = new grpc.Client(a.target, creds, options);
  const id = (x) => x;
  const opts = a.timeout !== null ? { deadline: deadline(a.timeout) } : {};
  await new Promise((resolve) => {
    client.makeUnaryRequest(p, id, id, body, metadata(a), opts, (err, resp) => {
      const line = { call: 'raw', method: p, request_hex: body.toString('hex') };
      if (err) Object.assign(line, { code: CODE_NAMES[err.code] || 'UNKNOWN', details: err.details || '' });
      else Object.assign(line, { code: 'OK', details: '', response_hex: Buffer.from(resp).toString('hex') });
      out(line);
      resolve();
    });
  });
  client.close();
}

const args = parseArgs(process.argv.slice(2));
(args.mode === 'raw' ? raw(args) : agent(args)).catch((e) => die(String(e && e.stack ? e.stack : e)));
