module github.com/coupharness/coup/examples/raft

go 1.26.0

require (
	github.com/coupharness/coup v0.0.0
	go.etcd.io/raft/v3 v3.7.0
	google.golang.org/protobuf v1.36.12
)

require (
	github.com/BurntSushi/toml v1.6.0 // indirect
	github.com/anishathalye/porcupine v1.3.1 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
)

replace github.com/coupharness/coup => ../..
