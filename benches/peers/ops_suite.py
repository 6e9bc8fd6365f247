"""The operator suite's operators and sizes, as `suite()` in benches/support/ops.rs has
them, for the peers' scripts (`tvm_ops.py`, `runtimes_ops.py`), each of which builds
every operator its own way. Imports nothing, so that each peer's environment can read
it.
"""


def suite(scale):
    """The operators at `1 / scale` of their size in each dimension (the non-square
    matrix products at their size; 1000^3 only at full size), in ops_bench's order:
    `(kind, arguments)`, the arguments by name:

    - `"matmul"`: `m`, `n`, `k`, and `name`, `batch`, `epilogue` (a bias and ReLU);
    - `"conv"` (3x3): `name`, `c`, `h`, `w`, `k`, `stride`, `pads` (top, bottom, left,
      right);
    - `"depthwise"` (3x3, zero padding 1), `"maxpool"` (3x3, stride 2): `c`, `h`, `w`;
    - `"elementwise"`: `name`, `n`, `m`, `binary` (add, else ReLU);
    - `"softmax"` (over rows): `b`, `n`;
    - `"jacobi"`, `"blur"`: `h`, `w`.
    """

    def s(x):
        return max(x // scale, 1)

    c, hw, k = s(64), s(56), s(64)
    c2, hw2, k2 = s(128), s(13), s(256)
    pool_c, pool_hw = s(64), s(55)
    n2 = s(2048)
    ops = [
        ("matmul", dict(m=s(1024), n=s(1024), k=s(1024))),
        ("matmul", dict(m=196, n=256, k=2304)),
        ("matmul", dict(m=128, n=3072, k=768)),
    ]
    if scale == 1:
        ops.append(("matmul", dict(m=1000, n=1000, k=1000)))
    ops += [
        ("matmul", dict(m=s(256), n=s(256), k=s(256), name="batched_matmul", batch=8)),
        ("conv", dict(name="conv2d 3x3 s1", c=c, h=hw, w=hw, k=k, stride=1,
                      pads=(1, 1, 1, 1))),
        ("conv", dict(name="conv2d 3x3 s2", c=c2, h=2 * hw2 + 2, w=2 * hw2 + 2, k=k2,
                      stride=2, pads=(1, 0, 1, 0))),
        ("depthwise", dict(c=s(128), h=hw, w=hw)),
        ("maxpool", dict(c=pool_c, h=pool_hw, w=pool_hw)),
        ("elementwise", dict(name="add", n=n2, m=n2, binary=True)),
        ("elementwise", dict(name="relu", n=n2, m=n2, binary=False)),
        ("matmul", dict(m=s(1024), n=s(1024), k=s(1024), name="matmul_bias_relu",
                        epilogue=True)),
        ("softmax", dict(b=s(1024), n=s(4096))),
        ("jacobi", dict(h=n2, w=n2)),
        ("blur", dict(h=n2, w=n2)),
    ]
    return ops
