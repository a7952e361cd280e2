package script

import (
	"reflect"

	"github.com/redis/go-redis/v9"
)

// IsNil reports whether client is nil, or a typed nil pointer such as a
// nil *redis.Client, which no call can be made on.
func IsNil(client redis.UniversalClient) bool {
	if client == nil {
		return true
	}
	v := reflect.ValueOf(client)
	return v.Kind() == reflect.Pointer && v.IsNil()
}
