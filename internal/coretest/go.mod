module github.com/shardkey/shardkey/internal/coretest

go 1.25.0

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/jackc/pgx/v5 v5.12.0
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.4 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel v1.46.0 // indirect
	go.opentelemetry.io/otel/metric v1.46.0 // indirect
	go.opentelemetry.io/otel/trace v1.46.0 // indirect
	golang.org/x/sync v0.22.0 // indirect
	golang.org/x/text v0.41.0 // indirect
)

require (
	github.com/XSAM/otelsql v0.44.0
	github.com/shardkey/shardkey v0.1.0
	github.com/shardkey/shardkey/internal/dbtest v0.1.0
)

replace github.com/shardkey/shardkey => ../..

replace github.com/shardkey/shardkey/internal/dbtest => ../dbtest
