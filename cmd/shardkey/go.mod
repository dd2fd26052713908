module github.com/shardkey/shardkey/cmd/shardkey

go 1.26.0

require (
	github.com/go-sql-driver/mysql v1.10.1
	github.com/jackc/pgx/v5 v5.12.0
	go.yaml.in/yaml/v3 v3.0.6 // indirect
)

require (
	filippo.io/edwards25519 v1.2.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/coreos/go-systemd/v22 v22.7.0 // indirect
	github.com/dustin/go-humanize v1.1.0 // indirect
	github.com/golang/protobuf v1.5.4 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/grpc-ecosystem/grpc-gateway/v2 v2.29.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/pgservicefile v0.0.0-20240606120523-5a60cdf6a761 // indirect
	github.com/jackc/puddle/v2 v2.2.3 // indirect
	github.com/mattn/go-isatty v0.0.24 // indirect
	github.com/ncruces/go-strftime v1.1.0 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.etcd.io/etcd/api/v3 v3.7.3 // indirect
	go.etcd.io/etcd/client/pkg/v3 v3.7.3 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	go.uber.org/multierr v1.11.0 // indirect
	golang.org/x/net v0.61.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/genproto/googleapis/api v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d // indirect
	google.golang.org/grpc v1.83.2 // indirect
	google.golang.org/protobuf v1.36.11 // indirect
	modernc.org/libc v1.80.1 // indirect
	modernc.org/mathutil v1.7.1 // indirect
	modernc.org/memory v1.12.1 // indirect
)

require (
	github.com/go-zookeeper/zk v1.0.4
	github.com/redis/go-redis/v9 v9.22.0
	github.com/shardkey/shardkey v0.1.0
	github.com/shardkey/shardkey/internal/dbtest v0.1.0
	github.com/shardkey/shardkey/keygen/workerlease v0.1.0
	github.com/shardkey/shardkey/keygen/workerlease/etcdlease v0.1.0
	github.com/shardkey/shardkey/keygen/workerlease/redislease v0.1.0
	github.com/shardkey/shardkey/keygen/workerlease/zklease v0.1.0
	go.etcd.io/etcd/client/v3 v3.7.3
	go.uber.org/zap v1.27.1
	modernc.org/sqlite v1.62.0
)

replace github.com/shardkey/shardkey => ../..

replace github.com/shardkey/shardkey/keygen/workerlease => ../../keygen/workerlease

replace github.com/shardkey/shardkey/internal/dbtest => ../../internal/dbtest

replace github.com/shardkey/shardkey/keygen/workerlease/etcdlease => ../../keygen/workerlease/etcdlease

replace github.com/shardkey/shardkey/keygen/workerlease/redislease => ../../keygen/workerlease/redislease

replace github.com/shardkey/shardkey/keygen/workerlease/zklease => ../../keygen/workerlease/zklease
