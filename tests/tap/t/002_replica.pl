# A streaming replica: recall there returns the same rows and scores as on the primary, for every
# tenant, user and query tried; it writes nothing (the recall log stays on the primary, even with
# memory_fabric.log_recalls on); and the write path fails there with a clear error.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

my $root = $ENV{MF_ROOT} or die "MF_ROOT is not set";
my $primary = PostgreSQL::Test::Cluster->new('primary');
$primary->init(allows_streaming => 1);
$primary->start;
$primary->safe_psql('postgres', 'CREATE DATABASE mf');
$primary->command_ok(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'DBNAME=mf', '-d', $primary->connstr('mf'),
                      '-f', "$root/tests/load/setup.sql"], 'load schema installed');
# 600 pipeline calls and 40 retractions, as the ordinary role
$primary->safe_psql('mf', q{
	SET ROLE memory_fabric_load;
	SELECT count(load.pipeline(i % 10, (i / 10) % 5, (i / 50) % 30, (i / 7) % 4, i % 5)) FROM generate_series(0, 599) i;
	SELECT count(load.retract(i % 10)) FROM generate_series(0, 39) i;});
$primary->backup('b');
my $standby = PostgreSQL::Test::Cluster->new('standby');
$standby->init_from_backup($primary, 'b', has_streaming => 1);
$standby->start;
# written after the backup, so it reaches the standby by streaming
$primary->safe_psql('mf', q{
	SET ROLE memory_fabric_load;
	SELECT count(load.pipeline(i % 10, (i / 10) % 5, (i / 50) % 30, (i / 7) % 4, i % 5)) FROM generate_series(600, 799) i;});
$primary->wait_for_catchup($standby);
is($standby->safe_psql('mf', 'SELECT pg_is_in_recovery()'), 't', 'the standby is in recovery');

my $as_of = $primary->safe_psql('mf', 'SELECT clock_timestamp()');
my $recalls = qq{
	SET ROLE memory_fabric_load;
	SELECT t, u, q, (SELECT string_agg(r.memory_id || ':' || round(r.score::numeric, 12), ',' ORDER BY r.memory_id)
	                 -- set_config returns the tenant it pins, so the pin is set as the call's argument
	                 FROM memory_fabric.recall(set_config('memory_fabric.tenant_id', 't_load_' || t, false), NULL,
	                                           user_id => CASE WHEN u < 4 THEN 'u' || u END,
	                                           query_text => q, max_recalls => 5, as_of => '$as_of') r)
	FROM generate_series(0, 9) t, generate_series(0, 4) u,
	     unnest(ARRAY['which channel for topic 3', 'prefers email', 'sms for topic 12']) q
	ORDER BY 1, 2, 3};
my $on_primary = $primary->safe_psql('mf', $recalls);
my $on_standby = $standby->safe_psql('mf', $recalls);
my @lines = split /\n/, $on_primary;
is(scalar @lines, 150, '150 recalls (10 tenants, 5 users, 3 queries)');
cmp_ok(scalar(grep { !/\|$/ } @lines), '>', 100, 'most of them return memories');
is($on_standby, $on_primary, 'the standby recalls the same memories with the same scores');
my $no_query = q{
	SET ROLE memory_fabric_load;
	SELECT t, (SELECT string_agg(r.memory_id, ',')
	           FROM memory_fabric.recall(set_config('memory_fabric.tenant_id', 't_load_' || t, false), NULL, user_id => 'u1') r)
	FROM generate_series(0, 9) t ORDER BY 1};
is($standby->safe_psql('mf', $no_query), $primary->safe_psql('mf', $no_query), 'and the same without a query');

# the recall log is written on the primary only: with memory_fabric.log_recalls on, recall on
# the standby still works (a write there would fail the whole call) and logs nothing
my $logged = 'SELECT count(*) FROM memory_fabric.recall_log';
my $before = $standby->safe_psql('mf', $logged);
is($standby->safe_psql('mf', "SET memory_fabric.log_recalls = on; $recalls"), $on_primary,
	'with log_recalls on, the standby recalls the same');
is($standby->safe_psql('mf', $logged), $before, 'and writes no log row');
my ($rc, $out, $err) = $standby->psql('mf', q{
	SET ROLE memory_fabric_load;
	SELECT set_config('memory_fabric.tenant_id', 't_load_1', false);
	SELECT memory_fabric.capture_memory('t_load_1', 'Written on a standby.', 'agent', 'INTERNAL');},
	on_error_stop => 1, extra_params => ['-v', 'VERBOSITY=verbose']);
isnt($rc, 0, 'capture on the standby fails');
like($err, qr/25006: memory_fabric cannot write in a read-only transaction/, 'with 25006 and a clear message');
like($err, qr/standby in recovery/, 'which says why');
unlike($err, qr/panic|backtrace|std::/, 'and no Rust internals');
($rc, $out, $err) = $standby->psql('mf', q{
	SET ROLE memory_fabric_load;
	SELECT set_config('memory_fabric.tenant_id', 't_load_1', false);
	SELECT memory_fabric.review_candidate((SELECT max(id) FROM memory_fabric.candidates WHERE tenant_id = 't_load_1'));},
	extra_params => ['-v', 'VERBOSITY=verbose']);
like($err, qr/25006/, 'review on the standby: 25006 too');
my $primary_before = $primary->safe_psql('mf', $logged);
$primary->safe_psql('mf', "SET memory_fabric.log_recalls = on; $recalls");
is($primary->safe_psql('mf', $logged), $primary_before + 150, 'the primary logs the same 150 recalls');
$standby->stop;
$primary->stop;
done_testing();
