/**
 * An agent's memory with node-postgres and pgvector: capture facts with the application's own
 * embedding, let the extension review and promote them, and recall by vector.
 *
 * The database side is set up once by an administrator (see ../run.sh):
 *     CREATE EXTENSION memory_fabric CASCADE;
 *     CREATE ROLE app LOGIN IN ROLE memory_fabric_agent;
 *     SELECT memory_fabric.grant_tenant('app', 'acme');
 *
 * Run: PGHOST=... PGPORT=... PGDATABASE=... PGUSER=app node dist/memory_agent.js
 * (node-postgres reads the libpq environment variables itself).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import pg, { DatabaseError } from "pg";
import pgvector from "pgvector/pg";

const MODEL = "example/hash-64"; // registered for the tenant by its admin (examples/run.sh)
const DIMS = 64;

/** The application's own embedding (a stand-in for a real model): hashed bag of words, L2-normalised. */
export function embed(text: string): number[] {
  const v = new Array<number>(DIMS).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    const h = createHash("sha256").update(word).digest().readUInt32LE(0);
    v[h % DIMS] += h & 0x8000_0000 ? 1 : -1;
  }
  const norm = Math.hypot(...v) || 1;
  return v.map((x) => x / norm);
}

// The rows this program reads, typed. numeric columns (priority_score) come back as strings
// from node-postgres; double precision as numbers; vector as number[] once pgvector's types
// are registered on the connection.
interface CandidateRow {
  id: string;
  embedding: number[] | null;
}
interface ReviewRow {
  status: "pending_promotion" | "duplicate_of" | "contradicts" | "rejected";
  reviewer: "auto" | "human";
  duplicate_of_id: string | null;
  proposed_tier: string;
  priority_score: string;
}
interface RecallRow {
  memory_id: string;
  text: string;
  score: number;
  relevance: number;
}

interface Remembered {
  candidateId: string;
  review: ReviewRow;
  memoryId?: string;
}

const registered = new WeakSet<pg.PoolClient>();

/**
 * Runs fn on a pooled connection pinned to the tenant. Every call of a non-superuser acts for
 * the tenant its session is pinned to, so the pin is set on each checkout: a pooled connection
 * may have served another tenant before.
 */
async function withTenant<T>(pool: pg.Pool, tenant: string, fn: (db: pg.PoolClient) => Promise<T>): Promise<T> {
  const db = await pool.connect();
  try {
    if (!registered.has(db)) {
      await pgvector.registerTypes(db); // vector columns parse to number[] on this connection
      registered.add(db);
    }
    await db.query("SELECT set_config('memory_fabric.tenant_id', $1, false)", [tenant]);
    return await fn(db);
  } finally {
    db.release();
  }
}

async function capture(db: pg.ClientBase, tenant: string, user: string, text: string, source = "agent"): Promise<CandidateRow> {
  const { rows } = await db.query<CandidateRow>(
    `SELECT id, embedding FROM memory_fabric.capture_memory(tenant_id => $1, text => $2, source => $3,
       classification => 'INTERNAL', user_id => $4, embedding => $5, embedding_model => $6)`,
    [tenant, text, source, user, pgvector.toSql(embed(text)), MODEL],
  );
  return rows[0];
}

async function review(db: pg.ClientBase, candidateId: string): Promise<ReviewRow> {
  const { rows } = await db.query<ReviewRow>(
    `SELECT status, reviewer, duplicate_of_id, proposed_tier, priority_score
       FROM memory_fabric.review_candidate($1)`,
    [candidateId],
  );
  return rows[0];
}

async function promote(db: pg.ClientBase, candidateId: string): Promise<string> {
  const { rows } = await db.query<{ id: string; tier: string }>("SELECT id, tier FROM memory_fabric.promote($1)", [candidateId]);
  return rows[0].id;
}

/** capture -> review -> promote (when the automatic review cleared it). */
async function remember(db: pg.ClientBase, tenant: string, user: string, text: string): Promise<Remembered> {
  const candidate = await capture(db, tenant, user, text);
  // the vector comes back as a number[]: the one we sent, at float4 precision
  assert.ok(Array.isArray(candidate.embedding), `embedding came back as ${typeof candidate.embedding}`);
  const sent = embed(text);
  assert.equal(candidate.embedding.length, sent.length);
  candidate.embedding.forEach((x, i) => assert.ok(Math.abs(x - sent[i]) < 1e-6, `embedding[${i}] ${x} != ${sent[i]}`));

  const rv = await review(db, candidate.id);
  if (rv.status === "pending_promotion" && rv.reviewer === "auto") {
    return { candidateId: candidate.id, review: rv, memoryId: await promote(db, candidate.id) };
  }
  return { candidateId: candidate.id, review: rv };
}

async function recall(db: pg.ClientBase, tenant: string, user: string, query: string): Promise<RecallRow[]> {
  const { rows } = await db.query<RecallRow>(
    `SELECT memory_id, text, score, relevance
       FROM memory_fabric.recall($1, NULL, user_id => $2, query_embedding => $3,
                                 query_embedding_model => $4, max_recalls => 2)`,
    [tenant, user, pgvector.toSql(embed(query)), MODEL],
  );
  return rows;
}

/** Asserts that op fails with the given SQLSTATE, which is what an application branches on. */
async function expectSqlState(code: string, what: string, op: () => Promise<unknown>): Promise<void> {
  try {
    await op();
  } catch (err) {
    if (!(err instanceof DatabaseError)) throw err;
    assert.equal(err.code, code, `${what}: expected SQLSTATE ${code}, got ${err.code} (${err.message})`);
    console.log(`${what}: ${err.code} ${err.message}${err.detail ? ` (detail: ${err.detail})` : ""}${err.hint ? ` (hint: ${err.hint})` : ""}`);
    return;
  }
  assert.fail(`${what}: expected SQLSTATE ${code}, but it succeeded`);
}

async function main(): Promise<void> {
  const pool = new pg.Pool({ max: 2 }); // connection settings from PGHOST, PGPORT, PGDATABASE, PGUSER
  pool.on("error", (err) => console.error("idle connection error:", err.message));
  const tenant = "acme";
  const user = "cus_42";
  const facts = [
    "Customer prefers email over phone calls.",
    "Customer's billing cycle starts on the 5th of each month.",
    "Customer uses the Lisbon warehouse for returns.",
  ];

  try {
    await withTenant(pool, tenant, async (db) => {
      for (const fact of facts) {
        const r = await remember(db, tenant, user, fact);
        console.log(`${JSON.stringify(fact)}: ${r.review.status} (${r.review.reviewer}, tier ${r.review.proposed_tier}, priority ${r.review.priority_score})` +
          (r.memoryId ? `, promoted as ${r.memoryId}` : ""));
        assert.ok(r.memoryId?.startsWith("pm_"), `${fact} was not promoted: ${JSON.stringify(r.review)}`);
      }

      // the same fact again is reviewed as a duplicate and never promoted twice
      const again = await remember(db, tenant, user, facts[0]);
      console.log(`again: ${again.review.status} ${again.review.duplicate_of_id}`);
      assert.equal(again.review.status, "duplicate_of");
      assert.ok(again.review.duplicate_of_id, "duplicate_of_id is not set");
      assert.equal(again.memoryId, undefined);

      // recall by the application's query vector
      const rows = await recall(db, tenant, user, "when does the billing cycle start");
      for (const r of rows) {
        console.log(`recalled: ${r.memory_id} score ${r.score.toFixed(3)} relevance ${r.relevance.toFixed(3)} ${JSON.stringify(r.text)}`);
      }
      assert.ok(rows.length > 0, "recall returned nothing");
      assert.equal(typeof rows[0].score, "number");
      assert.equal(rows[0].text, facts[1]);

      // errors carry SQLSTATEs: 22023 for a bad argument, 55000 for an action in the wrong state
      await expectSqlState("22023", "capture from source 'robot'", () => capture(db, tenant, user, "Beep.", "robot"));
      await expectSqlState("55000", "promote the duplicate", () => promote(db, again.candidateId));
    });

    // another user of the same tenant sees none of this customer's memories
    await withTenant(pool, tenant, async (db) => {
      const byVector = await recall(db, tenant, "cus_7", "when does the billing cycle start");
      const { rows } = await db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM memory_fabric.recall($1, NULL, user_id => 'cus_7')",
        [tenant],
      );
      console.log(`cus_7 recalls ${byVector.length} by vector, ${rows[0].n} by priority`);
      assert.equal(byVector.length, 0);
      assert.equal(rows[0].n, 0);
    });
  } finally {
    await pool.end();
  }
  console.log("ok");
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? (err.stack ?? err.message) : err);
  process.exitCode = 1;
});
