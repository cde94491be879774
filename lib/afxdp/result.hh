// The core's one error model: a value, or a negative errno.
//
// Factories return Result<T>; plain operations return int (0 or -errno).
// A factory whose caller needs more than the errno to decide what to do
// next returns Result<T, E>, E a struct that carries the errno with the
// rest (see QueueFailure), so that a failure travels as one value.
// The C API turns these into OVS's positive errno exactly once, at the edge.
#ifndef AFXDP_RESULT_HH
#define AFXDP_RESULT_HH

#include <optional>
#include <utility>

namespace afxdp {

template <typename T, typename E = int>
class Result {
public:
    Result(T &&value) : value_(std::move(value)) {}   // NOLINT: implicit.
    static Result failure(E error)
    {
        return Result(FailureTag{}, std::move(error));
    }

    bool ok() const noexcept { return value_.has_value(); }
    // With E = int: 0 or a negative errno.
    const E &error() const noexcept { return error_; }
    T &value() noexcept { return *value_; }
    T &&take() noexcept { return std::move(*value_); }

private:
    struct FailureTag {};
    Result(FailureTag, E &&error) : error_(std::move(error)) {}
    std::optional<T> value_;
    E error_{};
};

}  // namespace afxdp

#endif  // AFXDP_RESULT_HH
