# colocd build and test entry points.
#   make demo   run colocd on the embedded simulator (configs/demo.yaml)
#   make test   install test tools if missing, vet, then every test with -race
SHELL := /bin/bash
GO ?= go
TOOLS ?= $(or $(COLOCD_TOOLS),$(HOME)/.cache/colocd/tools)
PLUGIN := collector/telegrafplugin
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null)
export COLOCD_INFLUXD := $(TOOLS)/bin/influxd
export COLOCD_TELEGRAF := $(TOOLS)/bin/telegraf
# Integration tests fail (instead of skipping) when a tool is missing.
export COLOCD_REQUIRE_TOOLS := 1

.PHONY: all build test tools vet fmt-check unit bench demo clean

all: build

build:
	$(GO) build -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o bin/colocd ./cmd/colocd
	cd $(PLUGIN) && $(GO) build -o ../../bin/colocd-telegraf-yarn ./cmd/colocd-telegraf-yarn

tools:
	COLOCD_TOOLS=$(TOOLS) ./scripts/install-tools.sh

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet: fmt-check
	$(GO) vet ./...
	cd $(PLUGIN) && $(GO) vet ./...
	$(TOOLS)/bin/staticcheck ./...
	cd $(PLUGIN) && $(TOOLS)/bin/staticcheck ./...

test: tools vet
	$(GO) test -race -count=1 -timeout 30m ./...
	cd $(PLUGIN) && $(GO) test -race -count=1 -timeout 10m ./...

# Short tests only, no tools needed.
unit:
	COLOCD_REQUIRE_TOOLS= $(GO) test -short -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

demo: build
	./bin/colocd serve --config configs/demo.yaml

clean:
	rm -rf bin
