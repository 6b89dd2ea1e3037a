# kill -9 of the postmaster under a concurrent capture -> review -> promote and retract load,
# three times: after each restart every acknowledged capture, promotion and retraction is there,
# rows committed before the crash are unchanged, and the load test's invariants hold.
use strict;
use warnings;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(sleep);

my $root = $ENV{MF_ROOT} or die "MF_ROOT is not set";
my $clients = $ENV{MF_CRASH_CLIENTS} // 4;
my $cycles = $ENV{MF_CRASH_CYCLES} // 3;

my $node = PostgreSQL::Test::Cluster->new('crash');
$node->init;
$node->append_conf('postgresql.conf', "synchronous_commit = on\nmax_connections = 40\n");
$node->start;
$node->safe_psql('postgres', 'CREATE DATABASE mf');
$node->command_ok(['psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'DBNAME=mf', '-d', $node->connstr('mf'),
                   '-f', "$root/tests/load/setup.sql"], 'load schema installed');
# acknowledged work is checked against the log the clients keep, and the outcomes must survive too
$node->safe_psql('mf', 'ALTER TABLE load.outcomes SET LOGGED');
my $conn = $node->connstr('mf') . ' user=memory_fabric_load';
my $dir = PostgreSQL::Test::Utils::tempdir;

# every row of the append-only tables, as "kind id md5"
my $fingerprint = q{
		SELECT 'c ' || id || ' ' || md5(c::text) FROM memory_fabric.candidates c
		UNION ALL SELECT 'r ' || id || ' ' || md5(r::text) FROM memory_fabric.reviews r
		UNION ALL SELECT 'd ' || id || ' ' || md5(d::text) FROM memory_fabric.decisions d
		UNION ALL SELECT 'e ' || id || ' ' || md5(e::text) FROM memory_fabric.events e};
my %seen_before;    # id -> md5 of the row, for rows committed before a crash
my ($acked_captures, $acked_promotions, $acked_retractions) = (0, 0, 0);
for my $cycle (1 .. $cycles) {
	my @runs;
	for my $c (1 .. $clients) {
		push @runs, IPC::Run::start(["$root/tests/tap/client.sh", $conn, "$dir/ack.$cycle.$c", $cycle * 100 + $c],
			'>', \my $o, '2>', \my $e);
	}
	sleep(2 + $cycle);
	# rows committed by now, as a reader sees them in the middle of the load
	my $fp = $node->safe_psql('mf', $fingerprint);
	for (split /\n/, $fp) { my ($k, $id, $h) = split / /; $seen_before{"$k $id"} = $h; }
	sleep(1);
	$node->kill9;
	$_->finish for @runs;
	# the backends notice that the postmaster is gone and exit; until the last has, the shared
	# memory is still in use and a new postmaster refuses to start
	for (1 .. 100) {
		last if system("pgrep -f 'postgres: crash: ' > /dev/null") != 0;
		sleep(0.1);
	}
	my $started = 0;
	for (1 .. 20) {
		$node->{_pid} = undef;    # a failed start reads the dead postmaster's pid file
		last if ($started = $node->start(fail_ok => 1));
		sleep(0.5);
	}
	ok($started, "cycle $cycle: restarted after kill -9");

	my (@caps, @proms, @rets);
	for my $c (1 .. $clients) {
		my $f = "$dir/ack.$cycle.$c";
		next unless -e $f;
		for my $line (split /\n/, slurp_file($f)) {
			my ($op, $id, $outcome) = split / /, $line, 3;
			if ($op eq 'pipeline') {
				push @caps, $id;
				push @proms, $id if $outcome =~ / promoted$/;
			}
			elsif ($op eq 'retract' && $outcome eq 'retracted') { push @rets, $id; }
		}
	}
	$acked_captures += @caps; $acked_promotions += @proms; $acked_retractions += @rets;
	cmp_ok(scalar @caps, '>', 0, "cycle $cycle: clients had acknowledged captures (" . scalar(@caps) . ")");
	my $list = sub { join(',', map { "'$_'" } @_) || "''" };
	is($node->safe_psql('mf', 'SELECT count(*) FROM memory_fabric.candidates WHERE id IN (' . $list->(@caps) . ')'),
		scalar @caps, "cycle $cycle: every acknowledged capture is there");
	is($node->safe_psql('mf', 'SELECT count(*) FROM memory_fabric.promoted_memory WHERE candidate_id IN (' . $list->(@proms) . ')'),
		scalar @proms, "cycle $cycle: every acknowledged promotion is there (" . scalar(@proms) . ")");
	is($node->safe_psql('mf', 'SELECT count(*) FROM memory_fabric.promoted_memory WHERE retracted_at IS NOT NULL AND id IN ('
			. $list->(@rets) . ')'),
		scalar @rets, "cycle $cycle: every acknowledged retraction is there (" . scalar(@rets) . ")");
	my $now = $node->safe_psql('mf', $fingerprint);
	my %after = map { my ($k, $id, $h) = split / /; ("$k $id" => $h) } split /\n/, $now;
	my @changed = grep { !defined $after{$_} || $after{$_} ne $seen_before{$_} } keys %seen_before;
	is(scalar @changed, 0, "cycle $cycle: the " . scalar(keys %seen_before) . " append-only rows committed before the crash are unchanged");
	my $violations = $node->safe_psql('mf', slurp_file("$root/tests/load/check.sql"));
	my @bad = grep { /\|/ && !/\|0$/ } split /\n/, $violations;
	is(scalar @bad, 0, "cycle $cycle: the load invariants hold") or diag(join("\n", @bad));
}
ok($node->log_contains('database system was interrupted'), 'the server went through crash recovery');
note("crashes survived: $cycles; acknowledged: $acked_captures captures, $acked_promotions promotions, $acked_retractions retractions");
$node->stop;
done_testing();
