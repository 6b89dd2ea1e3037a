# Convenience aliases for the scripts the README names.
.PHONY: setup demo test unit cluster-start cluster-stop
setup:
	bash scripts/setup.sh
demo:
	bash scripts/demo.sh
test:
	bash scripts/test.sh
unit:
	cargo test -p memory_fabric_core
cluster-start:
	bash scripts/cluster.sh start
cluster-stop:
	bash scripts/cluster.sh stop
