package jsonscan

// PointerIn is Pointer with the V to fill supplied by in, a value the
// caller keeps from one walk to the next, so that a walk per line
// allocates nothing for it: in returns it zeroed. As with Pointer, null
// leaves the field nil and a value of another type than an object gives
// up.
func PointerIn[T, V any](name string, dst func(*T) **V, in func(*T) *V, f *Fields[V]) Field[T] {
	return Field[T]{Name: name, into: func(t *T, b []byte, i, depth int, valid bool) (int, bool) {
		switch b[i] {
		case 'n':
			return value(b, i, depth, valid)
		case '{':
			p := in(t)
			*dst(t) = p
			return f.walk(p, b, i, depth, valid)
		}
		return 0, false
	}}
}
