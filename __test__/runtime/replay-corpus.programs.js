'use strict';
// The corpus of replay-corpus.test.js: programs shaped like the ones chat models write for code
// mode. Each: `name`, `seed` (its tools' delays: for a program with `parallel` calls, one under
// which their replies tend to arrive out of the order they were issued, and under which a race
// is won by a call other than the first, by 10 ms or more), `uses` (what it exercises), `code`, `vary`
// (argument fields derived from time or randomness: an uninterrupted run may give them other
// values) and `check(run)`: what must hold within one run for the values derived from time and
// randomness, where `run.calls(tool)` lists the arguments of the tool's real invocations in the
// order they started, `run.pending` every action shown for approval ({ tool, args, seq }), and
// `run.result` the program's result. A check holds for any one uninterrupted run of its program.
const assert = require('node:assert/strict');
const { CUSTOMERS } = require('./replay-corpus.js');

const emailOf = (id) => CUSTOMERS.find((c) => c.id === id).email;
const one = (list, what) => {
  assert.equal(list.length, 1, `${what}: expected one call, got ${list.length}`);
  return list[0];
};
const audit = (run, event) => one(run.calls('audit.record').filter((a) => a.event === event), `audit.record ${event}`);

const PROGRAMS = [
  {
    name: 'parallel map of approvals',
    seed: 524645,
    parallel: true,
    uses: 'Promise.all(customers.filter().map(mail.send)): two approvals pending at once',
    code: `async () => {
  const customers = await crm.list_customers();
  const gold = customers.filter((c) => c.tier === "gold");
  const sent = await Promise.all(gold.map((c) => mail.send({ to: c.email, subject: "Your gold renewal", body: \`Hi \${c.name}, your plan renews next month.\` })));
  return { sent: sent.length };
}`,
  },
  {
    name: 'map with .then chains that issue effects',
    seed: 8919,
    parallel: true,
    uses: 'Promise.all(skus.map(stock.then(create))), then one approval whose memo joins the chains\' results',
    code: `async () => {
  const skus = await inventory.list_skus();
  const low = (await Promise.all(skus.map((sku) => inventory.stock({ sku }).then((s) => s.qty < 5
    ? tickets.create({ title: \`Restock \${sku}\`, qty: s.qty }).then((t) => ({ sku, ticket: t.id }))
    : null)))).filter(Boolean);
  const order = await bank.pay({ to: "supplier@example.com", amount: low.length * 100, memo: low.map((l) => l.ticket).join(",") });
  return { low, order };
}`,
  },
  {
    name: 'Promise.race over quotes',
    // Which call wins a race depends on the machine as well as the delays: an uninterrupted run
    // may pick another winner; the check ties the payment to the winner this run picked.
    vary: ['vendor', 'to', 'amount'],
    seed: 331025,
    parallel: true,
    uses: 'Promise.race of three calls; the winner is audited, then paid (approval)',
    code: `async () => {
  const sku = "C-300";
  const fastest = await Promise.race([
    pricing.quote({ vendor: "acme", sku }),
    pricing.quote({ vendor: "globex", sku }),
    pricing.quote({ vendor: "initech", sku }),
  ]);
  await audit.record({ event: "vendor-picked", vendor: fastest.vendor });
  return bank.pay({ to: fastest.vendor, amount: fastest.price, memo: \`PO for \${sku}\` });
}`,
    check: (run) => assert.equal(one(run.calls('bank.pay'), 'pay').to, audit(run, 'vendor-picked').vendor),
  },
  {
    name: 'for...of reads, then a parallel batch of approvals',
    seed: 234215,
    parallel: true,
    uses: 'sequential awaits in for...of, then Promise.all(map(mail.send))',
    code: `async () => {
  const customers = await crm.list_customers();
  const overdue = [];
  for (const c of customers) {
    const detail = await crm.get_customer({ id: c.id });
    if (detail.balance > 0 && detail.overdueDays > 30) overdue.push(detail);
  }
  const results = await Promise.all(overdue.map((d) => mail.send({ to: d.email, subject: "Payment reminder", body: \`You owe $\${d.balance}.\` })));
  return { reminded: overdue.map((d) => d.id), results };
}`,
  },
  {
    name: 'ISO timestamp in arguments',
    seed: 32676,
    uses: 'new Date().toISOString() before the pause, in an audit effect, in the approval and after it',
    code: `async () => {
  const startedAt = new Date().toISOString();
  await audit.record({ event: "payout-started", at: startedAt });
  const receipt = await bank.pay({ to: "ana@example.com", amount: 120, memo: \`Payout requested \${startedAt}\` });
  await audit.record({ event: "payout-done", at: new Date().toISOString(), requestedAt: startedAt });
  return { startedAt, receipt };
}`,
    check: (run) => {
      const at = audit(run, 'payout-started').at;
      assert.equal(one(run.calls('bank.pay'), 'pay').memo, `Payout requested ${at}`);
      assert.equal(audit(run, 'payout-done').requestedAt, at);
      assert.equal(run.result.startedAt, at);
    },
  },
  {
    name: 'crypto.randomUUID as a reference across tools',
    seed: 40595,
    uses: 'randomUUID() passed to tickets.create, bank.refund (approval) and tickets.comment',
    // The ticket's id is derived from its arguments, so from the ref: it differs between runs.
    vary: ['id'],
    code: `async () => {
  const ref = crypto.randomUUID();
  const ticket = await tickets.create({ title: "Refund for order o-c3-1", ref });
  await bank.refund({ to: "chen@example.com", amount: 45, ref });
  await tickets.comment({ id: ticket.id, text: \`Refund \${ref} sent\` });
  return { ref, ticket: ticket.id };
}`,
    check: (run) => {
      const { ref } = one(run.calls('tickets.create'), 'create');
      assert.equal(one(run.calls('bank.refund'), 'refund').ref, ref);
      assert.equal(one(run.calls('tickets.comment'), 'comment').text, `Refund ${ref} sent`);
      assert.equal(run.result.ref, ref);
    },
  },
  {
    name: 'Math.random picks whom to act on',
    seed: 48514,
    uses: 'customers[Math.floor(Math.random() * n)]: audited, then mailed (approval)',
    vary: ['winner', 'to'],
    code: `async () => {
  const customers = await crm.list_customers();
  const winner = customers[Math.floor(Math.random() * customers.length)];
  await audit.record({ event: "raffle", winner: winner.id });
  return mail.send({ to: winner.email, subject: "You won the raffle!" });
}`,
    check: (run) => assert.equal(one(run.calls('mail.send'), 'send').to, emailOf(audit(run, 'raffle').winner)),
  },
  {
    name: 'Date.now() as a branch condition',
    seed: 56433,
    uses: 'slots[Date.now() % 3] decides the booking (approval) and the mail after it (approval)',
    vary: ['slot', 'subject'],
    code: `async () => {
  const slots = ["09:00", "11:00", "14:00"];
  const slot = slots[Date.now() % slots.length];
  const booking = await calendar.book({ who: "ben@example.com", slot, note: "Quarterly review" });
  await mail.send({ to: "ben@example.com", subject: \`Review booked at \${slot}\` });
  return booking;
}`,
    check: (run) => assert.equal(one(run.calls('mail.send'), 'send').subject, `Review booked at ${one(run.calls('calendar.book'), 'book').slot}`),
  },
  {
    name: 'two approval tools in parallel',
    seed: 692726,
    parallel: true,
    uses: 'Promise.all([bank.pay, calendar.book])',
    code: `async () => {
  const [payment, invite] = await Promise.all([
    bank.pay({ to: "dara@example.com", amount: 75, memo: "Consulting" }),
    calendar.book({ who: "dara@example.com", slot: "10:00", note: "Kickoff" }),
  ]);
  return { payment, invite };
}`,
  },
  {
    name: 'two approvals in sequence sharing a UUID',
    seed: 72271,
    uses: 'randomUUID() batch id in two sequential bank.pay approvals',
    code: `async () => {
  const batchId = crypto.randomUUID();
  const p1 = await bank.pay({ to: "ana@example.com", amount: 50, batch: batchId });
  const p2 = await bank.pay({ to: "eli@example.com", amount: 20, batch: batchId });
  return { batchId, paid: [p1.paid, p2.paid] };
}`,
    check: (run) => {
      const pays = run.calls('bank.pay');
      assert.equal(pays.length, 2);
      assert.equal(pays[0].batch, pays[1].batch);
      assert.equal(run.result.batchId, pays[0].batch);
    },
  },
  {
    name: 'Promise.allSettled over chains',
    seed: 80190,
    parallel: true,
    uses: 'allSettled(ids.map(get_customer.then(tickets.create))), then a mail (approval) listing them',
    code: `async () => {
  const ids = ["c1", "c2", "c3", "c4", "c5"];
  const settled = await Promise.allSettled(ids.map((id) => crm.get_customer({ id })
    .then((c) => c.balance > 0 ? tickets.create({ title: \`Collect from \${c.name}\`, amount: c.balance }) : "clear")));
  const opened = settled.filter((s) => s.status === "fulfilled" && s.value !== "clear").map((s) => s.value.id);
  await mail.send({ to: "finance@example.com", subject: "Collections opened", body: opened.join(", ") });
  return opened;
}`,
  },
  {
    name: 'reduce into a sequential chain, then a timestamped approval',
    seed: 88109,
    uses: 'skus.reduce((p, sku) => p.then(...)), tickets.close with closedAt: new Date().toISOString()',
    code: `async () => {
  const skus = await inventory.list_skus();
  const log = [];
  await skus.slice(0, 3).reduce((p, sku) => p.then(async () => {
    const s = await inventory.stock({ sku });
    log.push(\`\${sku}:\${s.qty}\`);
  }), Promise.resolve());
  return tickets.close({ id: "T-77", summary: log.join(" "), closedAt: new Date().toISOString() });
}`,
    check: (run) => assert.match(one(run.calls('tickets.close'), 'close').closedAt, /^\d{4}-\d{2}-\d{2}T/),
  },
  {
    name: 'for await over an array of calls',
    seed: 96028,
    parallel: true,
    uses: 'for await (const s of skus.map(stock)) with effects inside, then an approval',
    code: `async () => {
  const skus = await inventory.list_skus();
  const inFlight = skus.map((sku) => inventory.stock({ sku }));
  const restocked = [];
  for await (const s of inFlight) {
    if (s.qty < 4) { await tickets.create({ title: \`Reorder \${s.sku}\` }); restocked.push(s.sku); }
  }
  await bank.pay({ to: "supplier@example.com", amount: restocked.length * 250, memo: restocked.join("+") });
  return restocked;
}`,
  },
  {
    name: 'batches of two with chains inside',
    seed: 103947,
    parallel: true,
    uses: 'for loop over slices, Promise.all(batch.map(get_customer.then(tickets.create))), then an approval',
    code: `async () => {
  const customers = await crm.list_customers();
  const opened = [];
  for (let i = 0; i < customers.length; i += 2) {
    const batch = customers.slice(i, i + 2);
    const ids = await Promise.all(batch.map((c) => crm.get_customer({ id: c.id })
      .then((d) => d.balance > 50 ? tickets.create({ title: \`Review \${d.name}\` }).then((t) => t.id) : null)));
    opened.push(...ids.filter(Boolean));
  }
  await bank.pay({ to: "collections@example.com", amount: 10 * opened.length, memo: opened.join(",") });
  return opened;
}`,
  },
  {
    name: 'Promise.race of a call against a timer',
    seed: 111866,
    uses: 'race(crm.search, setTimeout 300 ms), then a mail (approval) with sentAt: new Date().toISOString()',
    code: `async () => {
  const timeout = new Promise((resolve) => setTimeout(() => resolve({ timedOut: true }), 300));
  const hit = await Promise.race([crm.search({ q: "chen" }), timeout]);
  if (hit.timedOut) return "search timed out";
  const c = hit[0];
  await mail.send({ to: c.email, subject: "Following up", sentAt: new Date().toISOString() });
  return c.id;
}`,
    check: (run) => assert.equal(run.result, 'c3'),
  },
  {
    name: 'performance.now() elapsed time in arguments',
    seed: 224514,
    parallel: true,
    uses: 'performance.now() around Promise.all of quotes; the elapsed ms audited and put in the approval',
    vary: ['tookMs', 'memo'],
    code: `async () => {
  const t0 = performance.now();
  const quotes = await Promise.all(["acme", "globex"].map((vendor) => pricing.quote({ vendor, sku: "A-100" })));
  const tookMs = Math.round(performance.now() - t0);
  await audit.record({ event: "quotes", tookMs });
  const best = quotes.reduce((a, b) => (a.price <= b.price ? a : b));
  return bank.pay({ to: best.vendor, amount: best.price, memo: \`quoted in \${tookMs} ms\` });
}`,
    check: (run) => assert.equal(one(run.calls('bank.pay'), 'pay').memo, `quoted in ${audit(run, 'quotes').tookMs} ms`),
  },
  {
    name: 'crypto.getRandomValues token',
    seed: 127704,
    uses: 'getRandomValues(new Uint8Array(8)) as a hex code in an effect and in the approval',
    vary: ['code', 'body'],
    code: `async () => {
  const bytes = crypto.getRandomValues(new Uint8Array(8));
  const code = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  await tickets.create({ title: "Password reset for eli", code });
  await mail.send({ to: "eli@example.com", subject: "Your reset code", body: \`Code: \${code}\` });
  return code;
}`,
    check: (run) => {
      const { code } = one(run.calls('tickets.create'), 'create');
      assert.match(code, /^[0-9a-f]{16}$/);
      assert.equal(one(run.calls('mail.send'), 'send').body, `Code: ${code}`);
      assert.equal(run.result, code);
    },
  },
  {
    name: 'Math.random shuffle, then parallel approvals',
    seed: 135623,
    parallel: true,
    uses: 'Fisher-Yates with Math.random, audit of the sample, Promise.all(sample.map(mail.send))',
    vary: ['ids', 'to'],
    code: `async () => {
  const customers = await crm.list_customers();
  const shuffled = [...customers];
  for (let i = shuffled.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [shuffled[i], shuffled[j]] = [shuffled[j], shuffled[i]];
  }
  const sample = shuffled.slice(0, 2);
  await audit.record({ event: "survey-sample", ids: sample.map((c) => c.id) });
  await Promise.all(sample.map((c) => mail.send({ to: c.email, subject: "Quick survey" })));
  return sample.map((c) => c.id);
}`,
    check: (run) => {
      const { ids } = audit(run, 'survey-sample');
      assert.deepEqual(run.calls('mail.send').map((m) => m.to).sort(), ids.map(emailOf).sort());
      assert.deepEqual(run.result, ids);
    },
  },
  {
    name: 'nested Promise.all with approvals at the end of chains',
    seed: 143542,
    parallel: true,
    uses: 'customers.map(async c => Promise.all([get_customer, orders.list]) then bank.refund)',
    code: `async () => {
  const customers = await crm.list_customers();
  const refunds = await Promise.all(customers.slice(0, 3).map(async (c) => {
    const [detail, list] = await Promise.all([crm.get_customer({ id: c.id }), orders.list({ customerId: c.id })]);
    const damaged = list.filter((o) => o.status === "damaged");
    if (damaged.length === 0) return null;
    return bank.refund({ to: detail.email, amount: damaged.reduce((s, o) => s + o.amount, 0), orders: damaged.map((o) => o.id) });
  }));
  return refunds.filter(Boolean).length;
}`,
  },
  {
    name: 'find the first in stock (sequential, break)',
    seed: 151461,
    uses: 'for...of with await and break, then an approval',
    code: `async () => {
  const skus = await inventory.list_skus();
  let chosen = null;
  for (const sku of skus) {
    const s = await inventory.stock({ sku });
    if (s.qty >= 5) { chosen = s; break; }
  }
  if (!chosen) return "nothing in stock";
  return bank.pay({ to: "warehouse@example.com", amount: chosen.qty * 3, memo: \`Reserve \${chosen.sku}\` });
}`,
  },
  {
    name: 'a UUID per item in a parallel map',
    seed: 159380,
    parallel: true,
    uses: 'items.map(async item => randomUUID() then tickets.create), the ids in the approval',
    code: `async () => {
  const items = ["laptop", "monitor", "dock"];
  const created = await Promise.all(items.map(async (item) => {
    const id = crypto.randomUUID();
    await tickets.create({ title: \`Ship \${item}\`, id });
    return id;
  }));
  await bank.pay({ to: "courier@example.com", amount: 30 * items.length, shipments: created });
  return created;
}`,
    check: (run) => {
      const byTitle = Object.fromEntries(run.calls('tickets.create').map((t) => [t.title, t.id]));
      const expected = ['laptop', 'monitor', 'dock'].map((i) => byTitle[`Ship ${i}`]);
      assert.deepEqual(one(run.calls('bank.pay'), 'pay').shipments, expected);
      assert.deepEqual(run.result, expected);
    },
  },
  {
    name: 'Date.now() filter and a shared sentAt in parallel approvals',
    seed: 1947692,
    parallel: true,
    uses: 'invoices.filter(Date.parse(due) < Date.now()), Promise.all(mail.send({ sentAt }))',
    code: `async () => {
  const invoices = await billing.invoices();
  const now = Date.now();
  const overdue = invoices.filter((inv) => Date.parse(inv.due) < now && !inv.paid);
  const sentAt = new Date(now).toISOString();
  await Promise.all(overdue.map((inv) => mail.send({ to: inv.email, subject: \`Invoice \${inv.id} is overdue\`, sentAt })));
  return { count: overdue.length, sentAt };
}`,
    check: (run) => {
      const sends = run.calls('mail.send');
      assert.equal(sends.length, 2);
      assert.equal(sends[0].sentAt, sends[1].sentAt);
      assert.equal(run.result.sentAt, sends[0].sentAt);
    },
  },
  {
    name: 'a .then pipeline from the first call',
    seed: 175218,
    parallel: true,
    uses: 'list_customers().then(cs => Promise.all(cs.map(get_customer.then(tickets.comment)))).then(filter), then an approval',
    code: `async () => {
  const touched = await crm.list_customers()
    .then((cs) => Promise.all(cs.map((c) => crm.get_customer({ id: c.id })
      .then((d) => d.balance > 0 ? tickets.comment({ id: \`acct-\${d.id}\`, text: \`Balance \${d.balance}\` }).then(() => d.id) : null))))
    .then((ids) => ids.filter(Boolean));
  await mail.send({ to: "ops@example.com", subject: "Accounts with balance", body: touched.join(", ") });
  return touched;
}`,
  },
  {
    name: 'random jitter sleeps and a random request id',
    seed: 183137,
    uses: 'setTimeout(Math.random() * 10) between calls, Math.random().toString(36) in an effect and the approval',
    vary: ['requestId'],
    code: `async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const results = [];
  for (const id of ["c2", "c4"]) {
    await sleep(Math.floor(Math.random() * 10));
    results.push(await crm.get_customer({ id }));
  }
  const requestId = Math.random().toString(36).slice(2, 10);
  await audit.record({ event: "batch", requestId });
  return bank.pay({ to: results[1].email, amount: results[1].balance, requestId });
}`,
    check: (run) => assert.equal(one(run.calls('bank.pay'), 'pay').requestId, audit(run, 'batch').requestId),
  },
  {
    name: 'time and a UUID captured with codemode.step',
    seed: 191056,
    uses: 'codemode.step("now"/"ref"), the README\'s discipline',
    code: `async () => {
  const at = await codemode.step("now", () => new Date().toISOString());
  const id = await codemode.step("ref", () => crypto.randomUUID());
  await audit.record({ event: "export", at, id });
  return mail.send({ to: "ana@example.com", subject: \`Export \${id}\`, at });
}`,
    check: (run) => {
      const a = audit(run, 'export');
      const m = one(run.calls('mail.send'), 'send');
      assert.equal(m.subject, `Export ${a.id}`);
      assert.equal(m.at, a.at);
    },
  },
  {
    name: 'codemode.step id, then parallel chains with branches',
    seed: 198975,
    parallel: true,
    uses: 'codemode.step("run-id"), skus.map(stock.then(qty === 0 ? create : qty < 4 ? comment : null)), approval',
    code: `async () => {
  const runId = await codemode.step("run-id", () => crypto.randomUUID());
  const skus = await inventory.list_skus();
  await Promise.all(skus.map((sku) => inventory.stock({ sku }).then((s) => s.qty === 0
    ? tickets.create({ title: \`Out of stock \${sku}\`, runId })
    : s.qty < 4 ? tickets.comment({ id: \`sku-\${sku}\`, text: \`low \${s.qty}\`, runId }) : null)));
  return bank.pay({ to: "supplier@example.com", amount: 500, runId });
}`,
    check: (run) => {
      const { runId } = one(run.calls('bank.pay'), 'pay');
      for (const c of [...run.calls('tickets.create'), ...run.calls('tickets.comment')]) assert.equal(c.runId, runId);
    },
  },
  {
    name: 'Promise.any over quotes',
    vary: ['vendor', 'price', 'to', 'amount'],
    seed: 835268,
    parallel: true,
    uses: 'Promise.any(vendors.map(quote)), the first offer audited and paid (approval)',
    code: `async () => {
  const offer = await Promise.any(["acme", "globex", "initech"].map((vendor) => pricing.quote({ vendor, sku: "B-200" })));
  await audit.record({ event: "first-offer", vendor: offer.vendor, price: offer.price });
  return bank.pay({ to: offer.vendor, amount: offer.price, memo: "B-200" });
}`,
    check: (run) => {
      const a = audit(run, 'first-offer');
      const p = one(run.calls('bank.pay'), 'pay');
      assert.deepEqual([p.to, p.amount], [a.vendor, a.price]);
    },
  },
  {
    name: 'two parallel approvals, then a third in sequence, sharing a UUID',
    seed: 1157374,
    parallel: true,
    uses: 'randomUUID(); Promise.all([mail.send, calendar.book]); bank.pay',
    code: `async () => {
  const ref = crypto.randomUUID();
  await Promise.all([
    mail.send({ to: "chen@example.com", subject: "Contract ready", ref }),
    calendar.book({ who: "chen@example.com", slot: "15:00", note: \`Signing \${ref}\` }),
  ]);
  const paid = await bank.pay({ to: "chen@example.com", amount: 340, ref });
  return { ref, paid };
}`,
    check: (run) => {
      const { ref } = one(run.calls('mail.send'), 'send');
      assert.equal(one(run.calls('calendar.book'), 'book').note, `Signing ${ref}`);
      assert.equal(one(run.calls('bank.pay'), 'pay').ref, ref);
      assert.equal(run.result.ref, ref);
    },
  },
  {
    name: 'a sleep between issuing two calls, then Date.now() in arguments',
    seed: 432190,
    parallel: true,
    uses: 'calls started around setTimeout(5), Promise.all, Date.now() audited and in the approval',
    code: `async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const first = crm.get_customer({ id: "c1" });
  await sleep(5);
  const second = crm.get_customer({ id: "c3" });
  const [a, b] = await Promise.all([first, second]);
  const stamp = Date.now();
  await audit.record({ event: "compare", at: stamp });
  const richer = a.balance > b.balance ? a : b;
  return mail.send({ to: richer.email, subject: "Thanks for your business", at: stamp });
}`,
    check: (run) => assert.equal(one(run.calls('mail.send'), 'send').at, audit(run, 'compare').at),
  },
  {
    name: 'chunks whose chains end in approvals or drafts',
    seed: 230651,
    parallel: true,
    uses: 'for...of over chunks, Promise.all(chunk.map(get_customer.then(gold ? mail.send : mail.draft)))',
    code: `async () => {
  const customers = await crm.list_customers();
  const chunks = [customers.slice(0, 2), customers.slice(2, 4), customers.slice(4)];
  const done = [];
  for (const chunk of chunks) {
    const sent = await Promise.all(chunk.map((c) => crm.get_customer({ id: c.id })
      .then((d) => d.tier === "gold" ? mail.send({ to: d.email, subject: "Gold perks" }) : mail.draft({ to: d.email, subject: "Upgrade offer" }))));
    done.push(sent.length);
  }
  return done;
}`,
  },
  {
    name: 'the date in a subject of parallel approvals',
    seed: 448028,
    parallel: true,
    uses: 'new Date().toISOString().slice(0, 10) and generatedAt in Promise.all(map(mail.send))',
    code: `async () => {
  const day = new Date().toISOString().slice(0, 10);
  const customers = await crm.list_customers();
  const silver = customers.filter((c) => c.tier === "silver");
  await Promise.all(silver.map((c) => mail.send({ to: c.email, subject: \`Statement for \${day}\`, generatedAt: new Date().toISOString() })));
  return day;
}`,
    check: (run) => {
      for (const m of run.calls('mail.send')) {
        assert.equal(m.subject, `Statement for ${run.result}`);
        assert.equal(m.generatedAt.slice(0, 10), run.result);
      }
    },
  },
  {
    name: 'Promise.race of two chains',
    vary: ['title', 'subject'],
    seed: 351218,
    parallel: true,
    uses: 'race(get_customer.then(...), orders.list.then(...)); the winner names an effect and an approval',
    code: `async () => {
  const winner = await Promise.race([
    crm.get_customer({ id: "c2" }).then((c) => ({ via: "crm", c })),
    orders.list({ customerId: "c2" }).then((o) => ({ via: "orders", count: o.length })),
  ]);
  await tickets.create({ title: \`Lookup via \${winner.via}\` });
  return mail.send({ to: "ben@example.com", subject: \`Resolved via \${winner.via}\` });
}`,
    check: (run) => {
      const via = one(run.calls('tickets.create'), 'create').title.replace('Lookup via ', '');
      assert.equal(one(run.calls('mail.send'), 'send').subject, `Resolved via ${via}`);
    },
  },
  {
    name: 'parallel approvals whose continuations issue effects',
    seed: 359137,
    parallel: true,
    uses: 'Promise.all([pay.then(audit), pay.then(audit)])',
    code: `async () => {
  const payments = await Promise.all([
    bank.pay({ to: "ana@example.com", amount: 10, memo: "Bonus" }).then((r) => audit.record({ event: "paid-ana", id: r.id })),
    bank.pay({ to: "ben@example.com", amount: 15, memo: "Bonus" }).then((r) => audit.record({ event: "paid-ben", id: r.id })),
  ]);
  return payments.length;
}`,
  },
  {
    name: 'Math.random A/B assignment per item',
    seed: 262327,
    parallel: true,
    uses: 'Math.random() < 0.5 per customer decides subject and variant of parallel approvals',
    vary: ['assignments', 'subject', 'variant'],
    code: `async () => {
  const customers = (await crm.list_customers()).slice(0, 3);
  const assignments = customers.map((c) => ({ id: c.id, email: c.email, variant: Math.random() < 0.5 ? "A" : "B" }));
  await audit.record({ event: "ab-assign", assignments: assignments.map((a) => \`\${a.id}:\${a.variant}\`) });
  await Promise.all(assignments.map((a) => mail.send({ to: a.email, subject: a.variant === "A" ? "Meet the new dashboard" : "Your dashboard, reimagined", variant: a.variant })));
  return assignments.length;
}`,
    check: (run) => {
      const assigned = Object.fromEntries(audit(run, 'ab-assign').assignments.map((s) => s.split(':')).map(([id, v]) => [emailOf(id), v]));
      const sends = run.calls('mail.send');
      assert.equal(sends.length, 3);
      for (const m of sends) assert.equal(m.variant, assigned[m.to]);
    },
  },
  {
    name: 'Date.now() deadline decides which effects run, across a pause',
    seed: 270246,
    uses: 'deadline = Date.now() + 1 h kept across an approval; a branch on Date.now() < deadline after it',
    code: `async () => {
  const deadline = Date.now() + 3600000;
  await audit.record({ event: "window-open", until: new Date(deadline).toISOString() });
  await bank.pay({ to: "eli@example.com", amount: 60, memo: "inv-4" });
  if (Date.now() < deadline) await mail.send({ to: "eli@example.com", subject: "Paid within the window", until: new Date(deadline).toISOString() });
  else await tickets.create({ title: "Payment window missed" });
  return deadline;
}`,
    check: (run) => {
      const until = audit(run, 'window-open').until;
      assert.equal(one(run.calls('mail.send'), 'send').until, until);
      assert.equal(new Date(run.result).toISOString(), until);
    },
  },
];

module.exports = { PROGRAMS };
