SELECT bench.pipeline(nextval('bench.pipeline_seq'));
