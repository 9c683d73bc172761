package layout_test

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/mimoplan/mimoplan/internal/layout"
)

// Training.Model carries every field of the training block into the model
// package's options under the same name: a key added to one and not
// mapped fails here, not in a wrong estimate.
func TestTrainingModelCarriesEveryField(t *testing.T) {
	var lt layout.Training
	v := reflect.ValueOf(&lt).Elem()
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Bool:
			f.SetBool(true)
		case reflect.String:
			f.SetString("x" + v.Type().Field(i).Name)
		case reflect.Int:
			f.SetInt(int64(7 + i))
		case reflect.Float64:
			f.SetFloat(1.5 + float64(i))
		case reflect.Slice:
			f.Set(reflect.ValueOf([]string{"x" + v.Type().Field(i).Name}))
		default:
			t.Fatalf("field %s of kind %s: extend this test", v.Type().Field(i).Name, f.Kind())
		}
	}
	m := reflect.ValueOf(lt.Model())
	for i := range v.NumField() {
		name := v.Type().Field(i).Name
		mf := m.FieldByName(name)
		require.True(t, mf.IsValid(), "model.Training has no field %s", name)
		assert.Equal(t, v.Field(i).Interface(), mf.Interface(), name)
	}
}
