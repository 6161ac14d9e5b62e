"""Host (numpy + scipy) twin of the peers' anchor matrix generator (gen_laplacian.py, which needs
CuPy): P1 Laplacian on a jittered Kuhn tetrahedral mesh of the unit cube (n^3 nodes, 6 tets per
cell), Dirichlet rows on the x = 0 face replaced by identity.  Same file format:
int64 n, int64 nnz, int32 rowptr[n+1], int32 cols[nnz], float64 vals[nnz], float64 b[n].
The jitter and right-hand side come from numpy's generator, so the values are not the peers'
bit for bit; the structure and conditioning are.  usage: gen_laplacian_host.py N OUT"""
import sys

import numpy as np
import scipy.sparse as sp


def build(n, seed=1):
    h = 1.0 / (n - 1)
    ii, jj, kk = np.meshgrid(np.arange(n), np.arange(n), np.arange(n), indexing="ij")
    X = np.stack([ii, jj, kk], -1).reshape(-1, 3).astype(np.float64) * h
    rs = np.random.RandomState(seed)
    interior = ((ii > 0) & (ii < n - 1) & (jj > 0) & (jj < n - 1) & (kk > 0) & (kk < n - 1)).reshape(-1)
    X[interior] += (rs.rand(int(interior.sum()), 3) - 0.5) * 0.3 * h
    nid = lambda a, b, c: (a * n + b) * n + c
    ci, cj, ck = [g.reshape(-1) for g in np.meshgrid(np.arange(n - 1), np.arange(n - 1), np.arange(n - 1), indexing="ij")]
    v = [nid(ci + (q >> 2 & 1), cj + (q >> 1 & 1), ck + (q & 1)) for q in range(8)]
    perms = [(4, 2, 1), (4, 1, 2), (2, 4, 1), (2, 1, 4), (1, 4, 2), (1, 2, 4)]
    tets = []
    for p in perms:
        a = 0
        path = [0]
        for s in p:
            a |= s
            path.append(a)
        tets.append(np.stack([v[q] for q in path], 1))
    T = np.concatenate(tets, 0)
    P = X[T]
    J = np.stack([P[:, 1] - P[:, 0], P[:, 2] - P[:, 0], P[:, 3] - P[:, 0]], 1)
    det = np.linalg.det(J)
    Jinv = np.linalg.inv(J)
    G = np.concatenate([-Jinv.sum(2, keepdims=True), Jinv], 2).transpose(0, 2, 1)
    vol = np.abs(det) / 6.0
    K = np.einsum("eid,ejd->eij", G, G) * vol[:, None, None]
    rows = np.repeat(T, 4, 1).reshape(-1)
    cols = np.tile(T, (1, 4)).reshape(-1)
    A = sp.coo_matrix((K.reshape(-1), (rows, cols)), shape=(n**3, n**3)).tocsr()
    A.sum_duplicates()
    dir_mask = (ii == 0).reshape(-1)
    keep = (~dir_mask).astype(np.float64)
    D = sp.diags(keep)
    A = (D @ A @ D + sp.diags(dir_mask.astype(np.float64))).tocsr()
    A.eliminate_zeros()
    A.sort_indices()
    b = rs.rand(n**3) * keep
    return A, b


if __name__ == "__main__":
    n = int(sys.argv[1])
    out = sys.argv[2]
    A, b = build(n)
    with open(out, "wb") as f:
        np.array([A.shape[0], A.nnz], np.int64).tofile(f)
        A.indptr.astype(np.int32).tofile(f)
        A.indices.astype(np.int32).tofile(f)
        A.data.astype(np.float64).tofile(f)
        b.astype(np.float64).tofile(f)
    print(f"n={A.shape[0]} nnz={A.nnz} nnz/row={A.nnz / A.shape[0]:.2f}")
