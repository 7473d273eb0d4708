module github.com/cordon-sandbox/cordon

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/google/go-cmp v0.7.0
	github.com/stretchr/testify v1.12.1
	golang.org/x/sys v0.50.0
	mvdan.cc/sh/v3 v3.14.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
