module github.com/shardkey/shardkey/bench

go 1.25.0

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/glebarez/sqlite v1.11.0
	github.com/shardkey/shardkey v0.0.0-00010101000000-000000000000
	github.com/sony/sonyflake v1.2.0
	gorm.io/gorm v1.31.2
	gorm.io/sharding v0.6.2
)

require (
	github.com/dustin/go-humanize v1.0.1 // indirect
	github.com/glebarez/go-sqlite v1.21.2 // indirect
	github.com/google/uuid v1.3.0 // indirect
	github.com/jinzhu/inflection v1.0.0 // indirect
	github.com/jinzhu/now v1.1.5 // indirect
	github.com/longbridgeapp/sqlparser v0.3.1 // indirect
	github.com/mattn/go-isatty v0.0.17 // indirect
	github.com/remyoudompheng/bigfft v0.0.0-20230129092748-24d4a6f8daec // indirect
	go.yaml.in/yaml/v3 v3.0.6 // indirect
	golang.org/x/exp v0.0.0-20230817173708-d852ddb80c63 // indirect
	golang.org/x/sys v0.11.0 // indirect
	golang.org/x/text v0.41.0 // indirect
	modernc.org/libc v1.22.5 // indirect
	modernc.org/mathutil v1.5.0 // indirect
	modernc.org/memory v1.5.0 // indirect
	modernc.org/sqlite v1.23.1 // indirect
)

replace github.com/shardkey/shardkey => ..
