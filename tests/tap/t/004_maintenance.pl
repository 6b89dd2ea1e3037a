# The long maintenance operations, stopped part-way and resumed: re-embedding cancelled with
# pg_cancel_backend and cut by a crash (immediate shutdown), and purging and the bulk path
# (promote_pending) cancelled while they wait for a row lock. Each run commits after every batch: what it finished stays, the batch it was in
# leaves nothing, every row is either done or untouched, and running it again finishes the rest
# without doing any row twice.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(sleep);

my $n_mem = 300;
my $node = PostgreSQL::Test::Cluster->new('maint');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE mf');
# $n_mem memories of tenant t_m on the owner's bulk path, embedded by the built-in embedder; an
# admin role of the tenant; and two slow stand-ins for new models (20 ms a text).
$node->safe_psql('mf', qq{
	SET client_min_messages = warning;
	CREATE EXTENSION memory_fabric CASCADE;
	CREATE FUNCTION public.slow_embed(t text) RETURNS real[] LANGUAGE plpgsql VOLATILE SET search_path = pg_catalog
		AS \$\$ BEGIN PERFORM pg_sleep(0.02);
		   RETURN (SELECT array_agg((abs(hashtext(t || i::text)) % 997 + 1)::real / 997 ORDER BY i) FROM generate_series(1, 16) i);
		END \$\$;
	CREATE FUNCTION public.slow_embed_v2(t text) RETURNS real[] LANGUAGE sql VOLATILE SET search_path = pg_catalog
		AS \$\$ SELECT public.slow_embed(t || ' v2') \$\$;
	CREATE ROLE tap_admin LOGIN IN ROLE memory_fabric_admin;
	SELECT count(*) FROM memory_fabric.grant_tenant('tap_admin', 't_m');
	CREATE TABLE facts AS SELECT n, format('Fact %s: parcel %s goes to depot %s.', n, md5(n::text), n % 17) AS body
		FROM generate_series(1, $n_mem) n;
	INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
	                                      content_hash, policy_version)
	SELECT 'mc_m' || n, 't_m', 'agent', body, 'INTERNAL',
	       (SELECT e.builtin FROM memory_fabric._embed_query('t_m', body) e)::vector, 'memory_fabric/hash-384-v1',
	       md5(body) || md5(body), 1 FROM facts;
	INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
	SELECT 'rv_m' || n, 't_m', 'mc_m' || n, 'pending_promotion', 'semantic', 0.5, 'auto', 1 FROM facts;
	INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
	                                           priority, embedding, embedding_model, content_hash, promoted_by)
	SELECT 'pm_m' || f.n, c.id, 'rv_m' || f.n, 't_m', c.text, c.classification, c.source, 'semantic', 0.5,
	       c.embedding, c.embedding_model, c.content_hash, 'auto'
	FROM facts f JOIN memory_fabric.candidates c ON c.id = 'mc_m' || f.n;});

# Every memory is either untouched (its capture's vector and model) or done (the model's vector of
# its text), and counts per model.
sub state {
	my ($model, $fn) = @_;
	return $node->safe_psql('mf', qq{
		SELECT format('done %s, untouched %s, other %s',
			count(*) FILTER (WHERE m.embedding_model = '$model' AND m.embedding = public.$fn(m.text)::vector),
			count(*) FILTER (WHERE m.embedding_model = c.embedding_model AND m.embedding = c.embedding),
			count(*) FILTER (WHERE NOT (m.embedding_model = '$model' AND m.embedding = public.$fn(m.text)::vector)
			                   AND NOT (m.embedding_model = c.embedding_model AND m.embedding = c.embedding)))
		FROM memory_fabric.promoted_memory m JOIN memory_fabric.candidates c ON c.id = m.candidate_id
		WHERE m.tenant_id = 't_m'});
}
# (batch events, memories they name, distinct memories they name) for a model
sub batches {
	my ($model) = @_;
	return $node->safe_psql('mf', qq{
		SELECT format('%s %s %s', count(DISTINCT e.id), count(*), count(DISTINCT m))
		FROM memory_fabric.events e, jsonb_array_elements_text(e.payload -> 'memories') m
		WHERE e.kind = 'memory.reembedded' AND e.payload ->> 'model' = '$model'});
}
sub wait_for {
	my ($sql, $what) = @_;
	for (1 .. 600) {
		return 1 if $node->safe_psql('mf', $sql) eq 't';
		sleep(0.05);
	}
	die "timed out waiting for $what";
}
sub call_as_admin {
	my ($sql, $out, $err) = @_;
	return IPC::Run::start(['psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('mf') . ' user=tap_admin',
		'-c', "SET memory_fabric.tenant_id = 't_m'", '-c', $sql], '>', $out, '2>', $err);
}

# 1. Re-embedding, cancelled after two batches of 30 have committed (a batch takes about 0.6 s).
$node->safe_psql('mf', q{ALTER DATABASE mf SET memory_fabric.embedding_function = 'public.slow_embed';
	ALTER DATABASE mf SET memory_fabric.embedding_model = 'tap/slow16'});
my ($out, $err) = ('', '');
my $h = call_as_admin("CALL memory_fabric.reembed_memories('t_m', batch_size => 30)", \$out, \$err);
wait_for(q{SELECT count(*) >= 2 FROM memory_fabric.events WHERE kind = 'memory.reembedded'}, 'two batches');
$node->safe_psql('mf', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'tap_admin'});
$h->finish;
like($err, qr/canceling statement due to user request/, 'reembed_memories cancelled with pg_cancel_backend');
my @notices = $err =~ /NOTICE:  re-embedded (\d+) of $n_mem memories of tenant "t_m" with tap\/slow16/g;
my ($k) = split / /, batches('tap/slow16');
cmp_ok($k, '>=', 2, "$k batches committed before the cancel");
cmp_ok($k, '<', $n_mem / 30, 'and not all of them');
is(scalar(@notices), $k, 'one NOTICE per committed batch');
is($notices[-1], 30 * $k, 'the last NOTICE counts every memory committed');
is(state('tap/slow16', 'slow_embed'), sprintf('done %d, untouched %d, other 0', 30 * $k, $n_mem - 30 * $k),
	'the committed batches are kept whole; the cancelled batch left nothing');
is(batches('tap/slow16'), sprintf('%d %d %d', $k, 30 * $k, 30 * $k), 'one event per committed batch');

# resumed: the rest, and no memory twice
($out, $err) = ('', '');
$h = call_as_admin("CALL memory_fabric.reembed_memories('t_m', batch_size => 30)", \$out, \$err);
$h->finish;
is($h->result(0), 0, 'the same CALL again finishes');
like($err, qr/NOTICE:  re-embedded 30 of @{[$n_mem - 30 * $k]} memories .*\n(.*\n)*.*re-embedded @{[$n_mem - 30 * $k]} of @{[$n_mem - 30 * $k]} .*\(100%\)/,
	'counting from where the first run stopped');
is(state('tap/slow16', 'slow_embed'), "done $n_mem, untouched 0, other 0", 'every memory re-embedded');
is(batches('tap/slow16'), sprintf('%d %d %d', $n_mem / 30, $n_mem, $n_mem), 'each memory exactly once, in one event of its batch');

# 2. Re-embedding cut by a crash (immediate shutdown) part-way, then resumed.
$node->safe_psql('mf', q{ALTER DATABASE mf SET memory_fabric.embedding_function = 'public.slow_embed_v2';
	ALTER DATABASE mf SET memory_fabric.embedding_model = 'tap/slow16-v2'});
($out, $err) = ('', '');
$h = call_as_admin("CALL memory_fabric.reembed_memories('t_m', batch_size => 20)", \$out, \$err);
wait_for(q{SELECT count(*) >= 3 FROM memory_fabric.events WHERE kind = 'memory.reembedded' AND payload ->> 'model' = 'tap/slow16-v2'},
	'three batches');
$node->stop('immediate');
$h->finish;
$node->start;
my $v2 = $node->safe_psql('mf', q{SELECT count(*) FROM memory_fabric.promoted_memory WHERE embedding_model = 'tap/slow16-v2'});
($k) = split / /, batches('tap/slow16-v2');
cmp_ok($k, '>=', 3, "after the crash: $k batches of 20 committed");
is($v2, 20 * $k, 'exactly their memories carry the new model');
# the untouched rows of this run are the ones done by the first run
my $mixed = $node->safe_psql('mf', q{
	SELECT count(*) FILTER (WHERE embedding_model = 'tap/slow16-v2' AND embedding = public.slow_embed_v2(text)::vector)
	     + count(*) FILTER (WHERE embedding_model = 'tap/slow16' AND embedding = public.slow_embed(text)::vector)
	FROM memory_fabric.promoted_memory WHERE tenant_id = 't_m'});
is($mixed, $n_mem, 'every memory has the whole vector of one model or the other');
($out, $err) = ('', '');
$h = call_as_admin("CALL memory_fabric.reembed_memories('t_m', batch_size => 20)", \$out, \$err);
$h->finish;
is(state('tap/slow16-v2', 'slow_embed_v2'), "done $n_mem, untouched 0, other 0", 'resumed after the crash: every memory done');
is(batches('tap/slow16-v2'), sprintf('%d %d %d', $n_mem / 20, $n_mem, $n_mem), 'each memory exactly once');

# 3. Purging, cancelled while its third batch waits for a row another session holds.
$node->safe_psql('mf', q{
	ALTER DATABASE mf RESET memory_fabric.embedding_function;
	ALTER DATABASE mf RESET memory_fabric.embedding_model;
	SELECT memory_fabric.set_policy('t_m', '{"retention_seconds": {"default": 0}}');
	-- 100 of the memories expired, in a known order (the purge goes by expiry)
	CREATE TABLE expired AS SELECT 'pm_m' || n AS id, n FROM generate_series(1, 100) n;});
# they are written with an expiry in the past the way promote would, had their tier a TTL: the
# owner's bulk path again (promoted_memory has no write path for an expiry after the fact)
$node->safe_psql('mf', q{
	INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
	                                      content_hash, policy_version)
	SELECT 'mc_x' || n, 't_m', 'agent', 'Expired note ' || n, 'INTERNAL', NULL, 'memory_fabric/hash-384-v1',
	       md5(n::text) || md5(n::text), 1 FROM generate_series(1, 100) n;
	INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
	SELECT 'rv_x' || n, 't_m', 'mc_x' || n, 'pending_promotion', 'working', 0.5, 'auto', 1 FROM generate_series(1, 100) n;
	INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
	                                           priority, embedding_model, content_hash, promoted_by, promoted_at, expires_at)
	SELECT 'pm_x' || n, 'mc_x' || n, 'rv_x' || n, 't_m', 'Expired note ' || n, 'INTERNAL', 'agent', 'working', 0.5,
	       'memory_fabric/hash-384-v1', md5(n::text) || md5(n::text), 'auto', now() - interval '2 days',
	       now() - interval '1 day' + n * interval '1 second' FROM generate_series(1, 100) n;});
# another session holds memory 25 (third batch of 10)
my ($lin, $lout, $lerr) = ("BEGIN;\nSELECT 'locked' FROM memory_fabric.promoted_memory WHERE id = 'pm_x25' FOR UPDATE;\n", '', '');
my $locker = IPC::Run::start(['psql', '-XAtq', '-d', $node->connstr('mf')], '<', \$lin, '>', \$lout, '2>', \$lerr);
$locker->pump until $lout =~ /locked/;
($out, $err) = ('', '');
$h = call_as_admin("CALL memory_fabric.purge_expired_memories('t_m', batch_size => 10)", \$out, \$err);
wait_for(q{SELECT count(*) = 1 FROM pg_stat_activity WHERE usename = 'tap_admin' AND wait_event_type = 'Lock'},
	'the purge to wait for the lock');
$node->safe_psql('mf', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'tap_admin'});
$h->finish;
like($err, qr/canceling statement due to user request/, 'purge_expired_memories cancelled while it waited');
like($err, qr/NOTICE:  purged 20 of 100 expired memories of tenant "t_m" \(20%\)/, 'after reporting two batches');
my $purged = q{SELECT format('memories %s, candidates %s, events %s',
	(SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_m' AND erased_at IS NOT NULL AND text = '[erased]'),
	(SELECT count(*) FROM memory_fabric.candidates WHERE tenant_id = 't_m' AND erased_at IS NOT NULL AND text = '[erased]'),
	(SELECT coalesce(sum((payload ->> 'memories')::int), 0) FROM memory_fabric.events WHERE kind = 'memory.erased'))};
is($node->safe_psql('mf', $purged), 'memories 20, candidates 20, events 20', 'two batches purged, the third left nothing');
is($node->safe_psql('mf', q{SELECT string_agg(id, ',' ORDER BY expires_at) FROM memory_fabric.promoted_memory
	WHERE erased_at IS NOT NULL}), join(',', map { "pm_x$_" } 1 .. 20), 'the twenty that expired first');
# (its write to the scope, had it come first, would have held promote_pending at the first
# promotion of the scope instead: sql/schema.sql, _scope_changed())
$lin .= q{INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
VALUES ('rv_p025', 't_p', 'mc_p025', 'pending_promotion', 'semantic', 0.5, 'auto', 1);
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
                                           priority, embedding, embedding_model, content_hash, promoted_by)
SELECT 'pm_p025', c.id, 'rv_p025', 't_p', c.text, c.classification, c.source, 'semantic', 0.5, c.embedding,
       c.embedding_model, c.content_hash, 'auto' FROM memory_fabric.candidates c WHERE c.id = 'mc_p025';
COMMIT;
};
$locker->finish;
($out, $err) = ('', '');
$h = call_as_admin("CALL memory_fabric.purge_expired_memories('t_m', batch_size => 10)", \$out, \$err);
$h->finish;
like($err, qr/purged 80 of 80 expired memories of tenant "t_m" \(100%\)/, 'resumed: the other 80');
is($node->safe_psql('mf', $purged), 'memories 100, candidates 100, events 100', 'every expired memory purged once');
is($node->safe_psql('mf', q{SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_m' AND erased_at IS NULL}),
	$n_mem, 'and no other');
# 4. The bulk path (promote_pending), cancelled while its third batch of 10 waits for a candidate
# that another session is promoting, then resumed. 60 candidates of tenant t_p, none reviewed,
# captured in the order of their ids.
my $n_p = 60;
$node->safe_psql('mf', qq{
	CREATE ROLE tap_agent LOGIN IN ROLE memory_fabric_agent;
	SELECT count(*) FROM memory_fabric.grant_tenant('tap_agent', 't_p');
	INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
	                                      content_hash, policy_version, captured_at)
	SELECT 'mc_p' || lpad(f.n::text, 3, '0'), 't_p', 'agent', f.body, 'INTERNAL',
	       (SELECT e.builtin FROM memory_fabric._embed_query('t_p', f.body) e)::vector, 'memory_fabric/hash-384-v1',
	       md5(f.body) || md5(f.body), 1, now() - interval '1 hour' + f.n * interval '1 second'
	FROM (SELECT n, format('Shipment %s left depot %s with %s crates.', md5(n::text), n % 13, n) AS body
	      FROM generate_series(1, $n_p) n) f;});
# another session holds candidate 25 (third batch), as a step on it does (src/xact.rs, lock(), whose key
# memory_fabric._lock_key() computes),
# and has not committed yet; it promotes the candidate once promote_pending has been cancelled
($lin, $lout, $lerr) = (q{BEGIN;
INSERT INTO memory_fabric.locks AS l (key) VALUES (memory_fabric._lock_key('candidate', ARRAY['mc_p025']))
ON CONFLICT (key) DO UPDATE SET key = excluded.key WHERE false;
SELECT 'locked';
}, '', '');
$locker = IPC::Run::start(['psql', '-XAtq', '-d', $node->connstr('mf')], '<', \$lin, '>', \$lout, '2>', \$lerr);
$locker->pump until $lout =~ /locked/;
sub call_as_agent {
	my ($sql, $out, $err) = @_;
	return IPC::Run::start(['psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('mf') . ' user=tap_agent',
		'-c', "SET memory_fabric.tenant_id = 't_p'", '-c', $sql], '>', $out, '2>', $err);
}
($out, $err) = ('', '');
$h = call_as_agent("CALL memory_fabric.promote_pending('t_p', batch_size => 10)", \$out, \$err);
wait_for(q{SELECT count(*) = 1 FROM pg_stat_activity WHERE usename = 'tap_agent' AND wait_event_type = 'Lock'},
	'promote_pending to wait for the other promotion');
$node->safe_psql('mf', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE usename = 'tap_agent'});
$h->finish;
like($err, qr/canceling statement due to user request/, 'promote_pending cancelled while it waited');
like($err, qr/NOTICE:  20 of $n_p open candidates of tenant "t_p" done \(33%\): 20 reviewed, \d+ promoted/,
	'after reporting two batches');
is($node->safe_psql('mf', q{SELECT string_agg(candidate_id, ',' ORDER BY candidate_id) FROM memory_fabric.reviews
	WHERE tenant_id = 't_p'}), join(',', map { sprintf('mc_p%03d', $_) } 1 .. 20),
	'the two committed batches reviewed the first twenty; the third left nothing');
# (its write to the scope, had it come first, would have held promote_pending at the first
# promotion of the scope instead: sql/schema.sql, _scope_changed())
$lin .= q{INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
VALUES ('rv_p025', 't_p', 'mc_p025', 'pending_promotion', 'semantic', 0.5, 'auto', 1);
INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
                                           priority, embedding, embedding_model, content_hash, promoted_by)
SELECT 'pm_p025', c.id, 'rv_p025', 't_p', c.text, c.classification, c.source, 'semantic', 0.5, c.embedding,
       c.embedding_model, c.content_hash, 'auto' FROM memory_fabric.candidates c WHERE c.id = 'mc_p025';
COMMIT;
};
$locker->finish;
($out, $err) = ('', '');
$h = call_as_agent("CALL memory_fabric.promote_pending('t_p', batch_size => 10)", \$out, \$err);
$h->finish;
is($h->result(0), 0, 'the same CALL again finishes');
like($err, qr/NOTICE:  39 of 39 open candidates of tenant "t_p" done \(100%\)/,
	'resumed: the 39 still open (the other session promoted one)');
is($node->safe_psql('mf', q{SELECT format('unreviewed %s, reviewed twice %s, promotable left %s, promoted %s',
	(SELECT count(*) FROM memory_fabric.candidates c WHERE c.tenant_id = 't_p'
	   AND NOT EXISTS (SELECT 1 FROM memory_fabric.reviews r WHERE r.candidate_id = c.id)),
	(SELECT count(*) FROM (SELECT 1 FROM memory_fabric.reviews WHERE tenant_id = 't_p' GROUP BY candidate_id
	                       HAVING count(*) > 1) x),
	(SELECT count(*) FROM memory_fabric.reviews r WHERE r.tenant_id = 't_p' AND r.status = 'pending_promotion'
	   AND r.reviewer = 'auto' AND NOT EXISTS (SELECT 1 FROM memory_fabric.promoted_memory p WHERE p.candidate_id = r.candidate_id)),
	(SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_p'))}),
	"unreviewed 0, reviewed twice 0, promotable left 0, promoted $n_p",
	'every candidate reviewed once and promoted once');
$node->stop;
done_testing();
