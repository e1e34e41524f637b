#pragma once
// Python <-> C++ conversions shared by the translation units of gpuplace._core: JSON values,
// scenarios, seeds, actions, metrics, numpy views and caller buffers (conversions.cpp).

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <gpuplace/gpuplace.hpp>
#include <gpuplace/json.hpp>
#include <gpuplace/scenario_source.hpp>

namespace gpuplace_py {

namespace py = pybind11;
namespace gp = gpuplace;
using gp::json;

py::object to_py(const json& j);
/// The name of a Python value's type, for error messages.
std::string type_name(py::handle o);
/// A Python value as JSON: dicts (string keys), lists and tuples, str, bool, None, and numbers
/// (numpy's too). A non-finite float or any other type is a ConfigError naming its JSON path.
json py_to_json(py::handle o, const std::string& path);
/// A dict or JSON text (None: an empty object); `what` names it in errors.
json to_json_obj(py::handle o, const char* what);
/// A scenario from a gpuplace.Scenario (a copy, no parsing), a string (JSON text, a preset name or
/// a file: read_scenario()'s rule), a path object (a file) or a dict.
gp::scenario to_scenario(py::handle o);
/// The scenario's comm model name (ring_allreduce or tree_route); ConfigError otherwise.
std::string comm_model_of(const gp::scenario& s);
/// A seed: a Python int in [0, 2^64).
std::uint64_t to_seed(py::handle o);
/// An action: a Python or numpy integer (a 0-d integer array too).
std::int64_t to_action(py::handle o);
/// A number of held-out seeds: an integer in [1, 10^7]; ConfigError naming the value otherwise.
std::size_t seed_count(py::handle o);
/// A whole number in [lo, hi] (a Python or numpy integer, not a bool) for the argument `what`
/// (e.g. "vector env: num_envs"); a ConfigError naming the argument and the value otherwise.
std::size_t to_count(py::handle o, const std::string& what, std::size_t lo, std::size_t hi);
/// Physical memory of this machine in bytes (0 when unknown).
std::uint64_t physical_memory();
/// A byte count for messages: "1.5 GiB", "320 MiB", "12 KiB", "800 bytes".
std::string bytes_text(double bytes);
/// A count of held-out seeds or a sequence of seeds.
std::vector<std::uint64_t> to_seeds(py::handle o);
/// GPU ids from a Python sequence: each in [0, G), no duplicates; returned sorted.
std::vector<gp::gpu_id> to_gpus(py::handle o, std::size_t G);
/// A model of the zoo by index or name.
gp::model_id to_model(py::handle o, const gp::ModelZoo& zoo);

py::dict metrics_dict(const gp::metrics& m);
gp::metrics metrics_from_dict(py::handle o);
py::dict comm_dict(const gp::comm_result& r);
py::list layout_list(const std::vector<gp::obs_segment>& layout);
/// Text of a shape tuple, e.g. "(256,)" or "(256, 425)".
std::string shape_text(const std::vector<py::ssize_t>& shape);

/// A read-only numpy view of C++ memory, keeping `owner` alive.
template <class T>
py::array view(const T* data, std::vector<py::ssize_t> shape, py::handle owner, const char* dtype = nullptr) {
    py::dtype dt = dtype ? py::dtype(dtype) : py::dtype::of<T>();
    py::array a(dt, std::move(shape), {}, data, owner);
    py::detail::array_proxy(a.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
    return a;
}

template <class T>
py::array_t<T> copy_array(const std::vector<T>& v) {
    py::array_t<T> a(static_cast<py::ssize_t>(v.size()));
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(T));
    return a;
}

/// A caller's numpy array to be written in place: checks type, dtype, shape, C-contiguity and
/// writability, each with a message that names the argument and what was expected.
template <class T>
T* writable_buffer(py::handle h, const char* what, const std::vector<py::ssize_t>& shape, const char* dtype_name) {
    const auto want = std::string(what) + " must be a writable C-contiguous numpy " + dtype_name + " array of shape " +
                      shape_text(shape);
    if (!py::isinstance<py::array>(h)) throw py::type_error(want + ", got " + type_name(h));
    auto a = py::reinterpret_borrow<py::array>(h);
    if (!a.dtype().is(py::dtype::of<T>()))
        throw py::type_error(want + ", got dtype " + py::str(a.dtype()).cast<std::string>());
    std::vector<py::ssize_t> got(a.shape(), a.shape() + a.ndim());
    if (got != shape) throw py::value_error(want + ", got shape " + shape_text(got));
    if (!(a.flags() & py::array::c_style)) throw py::value_error(want + ", got a non-contiguous array (use np.ascontiguousarray)");
    if (!a.writeable()) throw py::value_error(want + ", got a read-only array");
    return static_cast<T*>(a.mutable_data());
}

}  // namespace gpuplace_py
