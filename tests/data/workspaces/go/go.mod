module github.com/acme/ledger

go 1.22.1

toolchain go1.22.3

require (
	github.com/gin-gonic/gin v1.10.0
	github.com/jackc/pgx/v5 v5.5.5
	github.com/stretchr/testify v1.9.0
	golang.org/x/sync v0.7.0
)

require (
	github.com/bytedance/sonic v1.11.6 // indirect
	github.com/gin-contrib/sse v0.1.0 // indirect
	github.com/jackc/pgpassfile v1.0.0 // indirect
	github.com/jackc/puddle/v2 v2.2.1 // indirect
	golang.org/x/crypto v0.23.0 // indirect
)
