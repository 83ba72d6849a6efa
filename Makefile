# Two commands on a fresh machine: `make run` and `make test`.
# When DATABASE_URL is not set, .ci/pg starts a private PostgreSQL under .data/pg.

SHELL := /bin/bash
GO ?= go
BIN := bin
export GOFLAGS ?= -buildvcs=false

# The version and commit stamped into svcd and svc (`--version`, /health). Override on the
# command line for a release build: make build VERSION=v1.2.3
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
LDFLAGS := -X svc/cmd/internal/cli.version=$(VERSION) -X svc/cmd/internal/cli.commit=$(COMMIT)

# The database: yours if DATABASE_URL is set, else the private cluster (started on demand).
DB_URL = $(if $(DATABASE_URL),$(DATABASE_URL),$(shell .ci/pg url))

.PHONY: all build run demo test test-engine test-partitions soak-partitions test-short tidy-check bench db-url db-stop fmt vet clean cluster cluster-stop cluster-status

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/ ./cmd/...

run: build
	@url="$(DB_URL)"; test -n "$$url" || { echo "no database (see the messages above)"; exit 1; }; \
	mkdir -p .data/journal; \
	DATABASE_URL="$$url" $(BIN)/svcd $(ARGS)

demo: build
	@url="$(DB_URL)"; test -n "$$url" || exit 1; \
	mkdir -p .data/journal; \
	DATABASE_URL="$$url" $(BIN)/svcd --demo $(ARGS)

# A cluster on this machine (docs/cluster.md): a development Kafka broker, an engine, a
# projector, a market-data node and gateways on :8080 and :8081 (.ci/cluster). SVC_DEMO=true
# also seeds the demo merchant and prints its key. `make run` stays the single process.
cluster: build
	@url="$(DB_URL)"; test -n "$$url" || { echo "no database (see the messages above)"; exit 1; }; \
	DATABASE_URL="$$url" .ci/cluster start

cluster-stop:
	@.ci/cluster stop

cluster-status:
	@.ci/cluster status

# go.mod and go.sum must be exactly what `go mod tidy` writes: a cheap first step of `make test`
# (and so of CI), which fails with the diff when a dependency was added or dropped by hand.
tidy-check:
	@$(GO) mod tidy -diff || { echo "go.mod/go.sum are not tidy: run 'go mod tidy' and commit the result" >&2; exit 1; }

# The whole suite against a real PostgreSQL; then everything with goroutines of its own (the
# engine, the gateway, persistence, webhook delivery, the treasury, the rates) again under the
# race detector; then every benchmark once (bench/smoke.sh), so one that stops working fails
# here, not at the next make bench.
test: tidy-check
	@url="$(DB_URL)"; test -n "$$url" || { echo "no database (see the messages above)"; exit 1; }; \
	echo "database: $$url"; \
	.ci/chromium || true; .ci/kcat || true; .ci/geth || true; .ci/nft || true; \
	DATABASE_URL="$$url" $(GO) test -count=1 -timeout 20m ./... && \
	DATABASE_URL="$$url" $(GO) test -count=1 -race -timeout 20m ./engine/... ./gateway/... ./persistence/... ./payments/webhooks/... ./payments/treasury/... ./payments/rates/... && \
	DATABASE_URL="$$url" GO=$(GO) ./bench/smoke.sh

# The partition harness (docs/cluster.md, "Partitions"): network namespaces, root only (it
# skips otherwise; `make test` as root runs it too, within ./...). Under 3 minutes.
test-partitions:
	@.ci/nft || true; $(GO) test -count=1 -run '^TestPartitions$$' -v -timeout 5m ./cmd/svcd

# The same faults in random order for SVC_PARTITION_SOAK (default 10m).
soak-partitions:
	@.ci/nft || true; SVC_PARTITION_SOAK=$${SVC_PARTITION_SOAK:-10m} $(GO) test -count=1 -run '^TestPartitions$$' -v -timeout 60m ./cmd/svcd

test-short:
	@DATABASE_URL="$(DB_URL)" $(GO) test -count=1 -short ./...

bench:
	@url="$(DB_URL)"; DATABASE_URL="$$url" BENCH_OUT=bench/out ./bench/run.sh

db-url:
	@echo "$(DB_URL)"

db-stop:
	@.ci/pg stop

fmt:
	gofmt -l -w $$(git ls-files '*.go')

vet:
	$(GO) vet ./...

clean:
	rm -rf $(BIN)
