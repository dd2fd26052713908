module github.com/shardkey/shardkey/bench

go 1.24

require (
	github.com/bwmarrin/snowflake v0.3.0
	github.com/shardkey/shardkey v0.0.0-00010101000000-000000000000
	github.com/sony/sonyflake v1.2.0
)

replace github.com/shardkey/shardkey => ..
