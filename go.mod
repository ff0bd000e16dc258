module github.com/coupharness/coup

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/anishathalye/porcupine v1.3.1
	github.com/go-zookeeper/zk v1.0.4
	github.com/hanwen/go-fuse/v2 v2.12.1
	github.com/mattn/go-isatty v0.0.20
	go.yaml.in/yaml/v3 v3.0.5
	golang.org/x/arch v0.33.0
	golang.org/x/sys v0.47.0
)
