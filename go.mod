module github.com/shardkey/shardkey

go 1.24
