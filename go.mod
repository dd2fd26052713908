module github.com/shardkey/shardkey

go 1.25.0

require (
	go.uber.org/goleak v1.3.0
	go.yaml.in/yaml/v3 v3.0.6
)
