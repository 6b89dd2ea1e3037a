# statement_timeout and pg_cancel_backend in the middle of review and promote: while review is
# asking a (slow) contradiction judge about each neighbour, inside its loop over them, and while
# promote re-checks its verdict the same way. Each cancelled call fails with 57014 and leaves no
# review, decision, memory or event; the same call then succeeds.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(sleep time);

my $node = PostgreSQL::Test::Cluster->new('cancel');
$node->init;
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE mf');
# five memories of one fact, written on the owner's bulk path, and a judge that takes 0.4 s a call
$node->safe_psql('mf', q{
	SET client_min_messages = warning;
	CREATE EXTENSION memory_fabric CASCADE;
	CREATE FUNCTION public.slow_judge(a text, b text) RETURNS boolean LANGUAGE plpgsql
		AS $$ BEGIN PERFORM pg_sleep(0.4); RETURN false; END $$;
	CREATE TABLE facts AS SELECT n, 'The on-call lead this week is ' || name || '.' AS body
		FROM unnest(ARRAY['Dana', 'Omar', 'Priya', 'Lena', 'Ken']) WITH ORDINALITY AS x(name, n);
	INSERT INTO memory_fabric.candidates (id, tenant_id, source, text, classification, embedding, embedding_model,
	                                      content_hash, policy_version)
	SELECT 'mc_cancel' || n, 't_c', 'agent', body, 'INTERNAL',
	       (SELECT e.builtin FROM memory_fabric._embed_query('t_c', body) e)::vector, 'memory_fabric/hash-384-v1',
	       md5(body) || md5(body), 1 FROM facts;
	INSERT INTO memory_fabric.reviews (id, tenant_id, candidate_id, status, proposed_tier, priority_score, reviewer, policy_version)
	SELECT 'rv_cancel' || n, 't_c', 'mc_cancel' || n, 'pending_promotion', 'semantic', 0.5, 'auto', 1 FROM facts;
	INSERT INTO memory_fabric.promoted_memory (id, candidate_id, review_id, tenant_id, text, classification, source, tier,
	                                           priority, embedding, embedding_model, content_hash, promoted_by)
	SELECT 'pm_cancel' || f.n, c.id, 'rv_cancel' || f.n, 't_c', c.text, c.classification, c.source, 'semantic', 0.5,
	       c.embedding, c.embedding_model, c.content_hash, 'auto'
	FROM facts f JOIN memory_fabric.candidates c ON c.id = 'mc_cancel' || f.n;});
# captured with the model the five memories have, so that review compares it with them
my $cand = $node->safe_psql('mf',
	q{SET memory_fabric.builtin_model = 'memory_fabric/hash-384-v1';
	  SELECT id FROM memory_fabric.capture_memory('t_c', 'The on-call lead this week is Zoe.', 'agent', 'INTERNAL')});
my $written = q{SELECT format('reviews %s, decisions %s, memories %s, events %s',
	(SELECT count(*) FROM memory_fabric.reviews WHERE tenant_id = 't_c'),
	(SELECT count(*) FROM memory_fabric.decisions WHERE tenant_id = 't_c'),
	(SELECT count(*) FROM memory_fabric.promoted_memory WHERE tenant_id = 't_c'),
	(SELECT count(*) FROM memory_fabric.events WHERE tenant_id = 't_c'))};
my $start = $node->safe_psql('mf', $written);
my $judge = "SET memory_fabric.contradiction_function = 'public.slow_judge';";

# pg_cancel_backend while review is in its loop over the neighbours
my ($out, $err) = ('', '');
my $h = IPC::Run::start(['psql', '-XAtq', '-v', 'ON_ERROR_STOP=1', '-d', $node->connstr('mf'), '-c',
	"$judge SELECT status FROM memory_fabric.review_candidate('$cand')"], '>', \$out, '2>', \$err);
my $t0 = time;
for (1 .. 50) {
	last if $node->safe_psql('mf', q{SELECT count(*) > 0 FROM pg_stat_activity
		WHERE query LIKE '%review_candidate%' AND pid <> pg_backend_pid() AND wait_event = 'PgSleep'}) eq 't';
	sleep(0.05);
}
$node->safe_psql('mf', q{SELECT pg_cancel_backend(pid) FROM pg_stat_activity
	WHERE query LIKE '%review_candidate%' AND pid <> pg_backend_pid()});
$h->finish;
like($err, qr/canceling statement due to user request/, 'review cancelled by pg_cancel_backend inside the judge loop');
cmp_ok(time - $t0, '<', 1.8, 'before it could finish (5 neighbours take 2 s)');
is($node->safe_psql('mf', $written), $start, 'nothing written');

# statement_timeout, the same place
my ($rc, $o, $e) = $node->psql('mf', "SET statement_timeout = '700ms'; $judge SELECT memory_fabric.review_candidate('$cand')",
	extra_params => ['-v', 'VERBOSITY=verbose']);
like($e, qr/57014: canceling statement due to statement timeout/, 'review stopped by statement_timeout: 57014');
is($node->safe_psql('mf', $written), $start, 'nothing written');

# now a review that finishes: the judge says no contradiction, so the candidate is promotable
is($node->safe_psql('mf', "$judge SELECT status FROM memory_fabric.review_candidate('$cand')"), 'pending_promotion',
	'the same review, uncancelled, completes');
my $reviewed = $node->safe_psql('mf', $written);

# promote re-checks the verdict under its locks, judge included: stop it there
($rc, $o, $e) = $node->psql('mf', "SET statement_timeout = '700ms'; $judge SELECT memory_fabric.promote('$cand')",
	extra_params => ['-v', 'VERBOSITY=verbose']);
like($e, qr/57014: canceling statement due to statement timeout/, 'promote stopped by statement_timeout in its re-check');
is($node->safe_psql('mf', $written), $reviewed, 'no memory, no event');
is($node->safe_psql('mf', "$judge SELECT promoted_by FROM memory_fabric.promote('$cand')"), 'auto', 'then it promotes');
like($node->safe_psql('mf', $written), qr/memories 6, events 1$/, 'one memory and its event');
$node->stop;
done_testing();
