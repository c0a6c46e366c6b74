'use strict';
// The services and the programs of replay-corpus.test.js (issue 36): connectors whose tools reply
// after seeded pseudo-random delays and record every real invocation, and programs written the
// way chat models write code-mode programs (parallel maps, chains that issue further calls,
// races, time and randomness in arguments and branch conditions), each pausing on approval tools.
const { CodemodeConnector } = require('../../lib/index.js');

// ---- Seeded delays ----------------------------------------------------------------------------

function fnv1a(text) {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

// mulberry32: a small PRNG, reproducible from its seed.
function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// JSON with sorted keys: the key of a call's arguments.
function stableJson(value) {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${stableJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

// A call's delay: 0 to 30 ms in steps of 5, a function of the program's seed, the tool and its
// arguments, so that the same call waits as long on every pass and in the uninterrupted run,
// and replies arrive out of the order the calls were issued.
function delayFor(seed, tool, args) {
  return 5 * Math.floor(prng(fnv1a(`${seed}|${tool}|${stableJson(args ?? null)}`))() * 7);
}

// ---- The services -----------------------------------------------------------------------------

const CUSTOMERS = [
  { id: 'c1', name: 'Ana Silva', email: 'ana@example.com', tier: 'gold' },
  { id: 'c2', name: 'Ben Okafor', email: 'ben@example.com', tier: 'silver' },
  { id: 'c3', name: 'Chen Wei', email: 'chen@example.com', tier: 'gold' },
  { id: 'c4', name: 'Dara Novak', email: 'dara@example.com', tier: 'bronze' },
  { id: 'c5', name: 'Eli Cohen', email: 'eli@example.com', tier: 'silver' },
];
const DETAILS = {
  c1: { balance: 120, overdueDays: 40 },
  c2: { balance: 0, overdueDays: 0 },
  c3: { balance: 340, overdueDays: 10 },
  c4: { balance: 75, overdueDays: 65 },
  c5: { balance: 0, overdueDays: 0 },
};
const ORDERS = {
  c1: [{ id: 'o-c1-1', amount: 30, status: 'damaged' }, { id: 'o-c1-2', amount: 12, status: 'shipped' }],
  c2: [{ id: 'o-c2-1', amount: 8, status: 'shipped' }],
  c3: [{ id: 'o-c3-1', amount: 45, status: 'damaged' }, { id: 'o-c3-2', amount: 20, status: 'damaged' }],
  c4: [],
  c5: [{ id: 'o-c5-1', amount: 99, status: 'shipped' }],
};
const STOCK = { 'A-100': 2, 'B-200': 14, 'C-300': 0, 'D-400': 7, 'E-500': 3 };
const INVOICES = [
  { id: 'inv-1', email: 'ana@example.com', amount: 120, due: '2020-01-15', paid: false },
  { id: 'inv-2', email: 'ben@example.com', amount: 40, due: '2021-06-30', paid: true },
  { id: 'inv-3', email: 'dara@example.com', amount: 75, due: '2022-03-01', paid: false },
  { id: 'inv-4', email: 'eli@example.com', amount: 60, due: '2099-01-01', paid: false },
];
const customer = (id) => {
  const c = CUSTOMERS.find((x) => x.id === id);
  if (!c) throw new Error(`No customer ${id}`);
  return { ...c, ...DETAILS[id] };
};
const idOf = (prefix, args) => `${prefix}-${fnv1a(stableJson(args)) % 10000}`;

// Each tool: `effect` (it changes something: counted, and must be applied exactly once),
// `approval` (it needs a person's approval in the durable runs), `reply` (its answer, a
// function of its arguments only).
const SERVICES = {
  crm: {
    list_customers: { reply: () => CUSTOMERS.map((c) => ({ ...c })) },
    get_customer: { reply: ({ id }) => customer(id) },
    search: { reply: ({ q }) => CUSTOMERS.filter((c) => c.name.toLowerCase().includes(String(q).toLowerCase())) },
  },
  orders: { list: { reply: ({ customerId }) => ORDERS[customerId] || [] } },
  inventory: {
    list_skus: { reply: () => Object.keys(STOCK) },
    stock: { reply: ({ sku }) => ({ sku, qty: STOCK[sku] }) },
  },
  pricing: { quote: { reply: ({ vendor, sku }) => ({ vendor, sku, price: 10 + (fnv1a(`${vendor}/${sku}`) % 90) }) } },
  billing: { invoices: { reply: () => INVOICES.map((i) => ({ ...i })) } },
  mail: {
    send: { effect: true, approval: true, reply: (args) => ({ messageId: idOf('m', args), to: args.to }) },
    draft: { effect: true, reply: (args) => ({ draftId: idOf('d', args) }) },
  },
  bank: {
    pay: { effect: true, approval: true, reply: (args) => ({ id: idOf('p', args), paid: args.amount }) },
    refund: { effect: true, approval: true, reply: (args) => ({ id: idOf('r', args), refunded: args.amount }) },
  },
  tickets: {
    create: { effect: true, reply: (args) => ({ id: idOf('T', args), title: args.title }) },
    comment: { effect: true, reply: () => ({ ok: true }) },
    close: { effect: true, approval: true, reply: (args) => ({ closed: args.id }) },
  },
  audit: { record: { effect: true, reply: () => ({ ok: true }) } },
  calendar: { book: { effect: true, approval: true, reply: (args) => ({ bookingId: idOf('b', args), slot: args.slot }) } },
};

class Service extends CodemodeConnector {
  constructor(name, world) {
    super();
    this.serviceName = name;
    this.world = world;
  }

  name() { return this.serviceName; }

  tools() {
    const { world } = this;
    return Object.fromEntries(Object.entries(SERVICES[this.serviceName]).map(([method, spec]) => {
      const tool = `${this.serviceName}.${method}`;
      return [method, {
        description: `${tool} (${spec.effect ? 'an effect' : 'a read'})`,
        requiresApproval: world.approvals && spec.approval === true,
        execute: async (args, ctx) => {
          // Recorded when it starts: a call that runs again on a later pass is seen twice.
          const invocation = { tool, args: JSON.parse(JSON.stringify(args ?? null)), seq: ctx.seq, effect: spec.effect === true };
          world.invocations.push(invocation);
          world.events.push(['start', invocation]);
          await new Promise((resolve) => setTimeout(resolve, delayFor(world.seed, tool, args)));
          world.events.push(['reply', invocation]);
          return spec.reply(args ?? {});
        },
      }];
    }));
  }
}

/** The connectors of one run, and what their tools really ran. */
function makeWorld(seed, { approvals }) {
  const world = { seed, approvals, invocations: [], events: [] };
  world.connectors = Object.keys(SERVICES).map((name) => new Service(name, world));
  return world;
}

/** Whether replies arrived out of the order their calls were issued (their seqs). */
function outOfIssueOrder(world) {
  const seqs = world.events.filter(([what]) => what === 'reply').map(([, call]) => call.seq);
  return seqs.some((seq, i) => i > 0 && seq < seqs[i - 1]);
}

const isApproval = (tool) => {
  const [service, method] = tool.split('.');
  return SERVICES[service][method].approval === true;
};

// ---- Normalising values derived from time and randomness -----------------------------------------

const ISO = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z/g;
const DAY = /\b\d{4}-\d{2}-\d{2}\b/g;
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

// What of a call's arguments an uninterrupted run of the same program must reproduce: timestamps,
// UUIDs and the fields named in `vary` (values a program derives from time or randomness) become
// placeholders; everything else stays.
function normalize(value, vary, key) {
  if (key !== undefined && vary.includes(key)) return '<vary>';
  if (typeof value === 'string') return value.replace(ISO, '<time>').replace(UUID, '<uuid>').replace(DAY, '<day>');
  if (typeof value === 'number') return value > 1e12 ? '<time>' : value;
  if (Array.isArray(value)) return value.map((v) => normalize(v, vary));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v, vary, k)]));
  }
  return value;
}

module.exports = { makeWorld, outOfIssueOrder, stableJson, normalize, isApproval, prng, fnv1a, CUSTOMERS, INVOICES, delayFor };
