module github.com/shardkey/shardkey

go 1.24

require go.yaml.in/yaml/v3 v3.0.6 // indirect
