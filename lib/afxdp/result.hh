// The core's one error model: a value, or a negative errno.
//
// Factories return Result<T>; plain operations return int (0 or -errno).
// The C API turns these into OVS's positive errno exactly once, at the edge.
#ifndef AFXDP_RESULT_HH
#define AFXDP_RESULT_HH

#include <optional>
#include <utility>

namespace afxdp {

template <typename T>
class Result {
public:
    Result(T &&value) : value_(std::move(value)) {}   // NOLINT: implicit.
    static Result failure(int neg_errno) { return Result(neg_errno); }

    bool ok() const noexcept { return value_.has_value(); }
    int error() const noexcept { return error_; }   // 0 or negative errno.
    T &value() noexcept { return *value_; }
    T &&take() noexcept { return std::move(*value_); }

private:
    explicit Result(int neg_errno) : error_(neg_errno) {}
    std::optional<T> value_;
    int error_ = 0;
};

}  // namespace afxdp

#endif  // AFXDP_RESULT_HH
