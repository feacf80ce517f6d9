package unlearn

// Kinds of the operators of this package, as reported by [BuiltinOf].
const (
	KindOracle       = "oracle"
	KindNoop         = "noop"
	KindParamOnly    = "param-only"
	KindPairDrop     = "pair-drop"
	KindMemoryReset  = "memory-reset"
	KindRetainFT     = "retain-ft"
	KindDropRefill   = "drop-refill"
	KindWindowReplay = "window"
)

// Builtin identifies one of this package's operators.
type Builtin struct {
	// Kind is one of the Kind constants.
	Kind string `json:"kind"`
	// Window is the replay window W of a window replay (Kind "window").
	Window int `json:"window,omitempty"`
}

// BuiltinOf reports which of this package's operators op is. It looks at
// op's concrete type, which only this package can construct, so an
// operator of another package cannot pose as a built-in one whatever its
// Name: certification (package certify) grants exactness and a-priori
// allowances only to operators whose behaviour it knows.
func BuiltinOf(op Operator) (Builtin, bool) {
	switch o := op.(type) {
	case oracle:
		return Builtin{Kind: KindOracle}, true
	case noop:
		return Builtin{Kind: KindNoop}, true
	case paramOnly:
		return Builtin{Kind: KindParamOnly}, true
	case pairDrop:
		return Builtin{Kind: KindPairDrop}, true
	case memoryReset:
		return Builtin{Kind: KindMemoryReset}, true
	case retainFT:
		return Builtin{Kind: KindRetainFT}, true
	case dropRefill:
		return Builtin{Kind: KindDropRefill}, true
	case window:
		return Builtin{Kind: KindWindowReplay, Window: o.w}, true
	}
	return Builtin{}, false
}
