module switchyard.test/compat/go/v2

go 1.21

require (
	github.com/segmentio/analytics-go v2.0.1-0.20160426181448-2d840d861c32+incompatible
	github.com/segmentio/backo-go v1.1.0
)

require (
	github.com/jehiah/go-strftime v0.0.0-20171201141054-1d33003b3869 // indirect
	github.com/xtgo/uuid v0.0.0-20140804021211-a0b114877d4c // indirect
)
