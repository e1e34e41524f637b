// gpuplace._core: the state queries Env and VectorEnv (env i) answer (objects.hpp), explicitly
// instantiated for the two env types so that env.cpp and vector_env.cpp share one copy.

#include <limits>

#include "objects.hpp"

namespace gpuplace_py {

namespace {

template <class J>
py::dict job_dict(const J& j, const gp::ModelZoo& zoo, double ideal) {
    py::dict d;
    d["id"] = j.id;
    d["submit_time"] = double(j.submit_time);
    d["num_gpus"] = j.num_gpus;
    d["model"] = j.model;
    d["model_name"] = zoo[j.model].name;
    d["work"] = double(j.work);
    d["ideal_duration"] = ideal;
    return d;
}


}  // namespace

/// The declared job fields of job j (index into simulator().jobs()): {name: a number, a category's
/// name, or None where the job has none}.
template <class E>
py::dict fields_dict(const E& e, std::uint32_t j) {
    py::dict d;
    const auto& fs = e.job_fields();
    for (std::size_t f = 0; f < fs.size(); ++f) {
        const double v = e.field_value(j, f);
        if (!(v == v)) d[py::str(fs[f].name)] = py::none();
        else if (fs[f].type == gp::field_type::category) d[py::str(fs[f].name)] = e.field_categories(f).at(std::size_t(v));
        else d[py::str(fs[f].name)] = v;
    }
    return d;
}

template <class E>
py::dict info_dict(const E& e) {
    // the keys are interned once and live as long as the interpreter: an info dict is built after
    // every Gymnasium step, and making 7 key strings each time was most of its cost
    static PyObject* const keys[] = {PyUnicode_InternFromString("time"),       PyUnicode_InternFromString("steps"),
                                     PyUnicode_InternFromString("jobs_done"),  PyUnicode_InternFromString("jobs_total"),
                                     PyUnicode_InternFromString("queued"),     PyUnicode_InternFromString("running"),
                                     PyUnicode_InternFromString("episode_return")};
    const auto i = e.info();
    py::dict d;
    auto set = [&](int k, py::object v) {
        if (!keys[k]) throw std::runtime_error("gpuplace: the info dict keys could not be created");
        if (PyDict_SetItem(d.ptr(), keys[k], v.ptr()) != 0) throw py::error_already_set();
    };
    set(0, py::float_(i.time));
    set(1, py::int_(i.steps));
    set(2, py::int_(i.jobs_done));
    set(3, py::int_(i.jobs_total));
    set(4, py::int_(i.queued));
    set(5, py::int_(i.running));
    set(6, py::float_(i.episode_return));
    if (const auto& k = e.config().workload.kind; k == "trace" || k == "mixture") d["models_assigned"] = i.models_assigned;
    return d;
}


template <class E>
py::object current_job(const E& e) {
    if (!e.has_current() || e.current_index() == E::none) return py::none();
    auto d = job_dict(e.current_job(), e.zoo(), e.simulator().ideal_duration(e.current_index()));
    if (!e.job_fields().empty()) d["fields"] = fields_dict(e, e.current_index());
    return d;
}

template <class E>
py::array_t<std::int64_t> gpu_holders(const E& e) {
    const auto& cl = e.cluster();
    py::array_t<std::int64_t> a(static_cast<py::ssize_t>(cl.num_gpus()));
    auto* p = a.mutable_data();
    for (std::size_t g = 0; g < cl.num_gpus(); ++g) {
        const auto h = cl.holder(static_cast<gp::gpu_id>(g));
        p[g] = h == gp::cluster_state::no_job ? -1 : h == gp::cluster_state::failed ? -2 : std::int64_t(e.simulator().job(h).id);  // -2: out of service
    }
    return a;
}

template <class E>
py::array_t<double> gpu_end_times(const E& e) {
    const auto& cl = e.cluster();
    py::array_t<double> a(static_cast<py::ssize_t>(cl.num_gpus()));
    auto* p = a.mutable_data();
    for (std::size_t g = 0; g < cl.num_gpus(); ++g) {
        const auto id = static_cast<gp::gpu_id>(g);
        p[g] = cl.is_free(id) ? std::numeric_limits<double>::quiet_NaN() : cl.end_time(id);
    }
    return a;
}

template <class E>
py::dict cluster_dict(const E& e) {
    const auto& t = e.topology();
    const auto& cl = e.cluster();
    std::vector<std::uint32_t> nf(t.num_nodes()), rf(t.num_racks());
    for (std::size_t n = 0; n < nf.size(); ++n) nf[n] = cl.node_free(n);
    for (std::size_t r = 0; r < rf.size(); ++r) rf[r] = cl.rack_free(r);
    std::vector<std::int64_t> picked(e.picked().begin(), e.picked().end());
    py::dict d;
    d["holders"] = gpu_holders(e);
    d["end_times"] = gpu_end_times(e);
    d["node_free"] = copy_array(nf);
    d["rack_free"] = copy_array(rf);
    py::dict df;  // every domain level, by name
    const auto& h = t.hierarchy();
    for (std::size_t l = 1; l < h.num_levels(); ++l) {
        const auto f = cl.free_on(l);
        df[py::str(h.level(l).name)] = copy_array(std::vector<std::uint32_t>(f.begin(), f.end()));
    }
    d["domain_free"] = df;
    d["free_gpus"] = cl.free_gpus();
    d["busy_gpus"] = cl.busy_gpus();
    d["picked"] = copy_array(picked);
    d["time"] = e.now();
    return d;
}


template <class E>
py::list queue_list(const E& e) {
    py::list l;
    for (auto j : e.queue()) {
        auto d = job_dict(e.simulator().job(j), e.zoo(), e.simulator().ideal_duration(j));
        if (!e.job_fields().empty()) d["fields"] = fields_dict(e, j);
        l.append(d);
    }
    return l;
}

/// Finished jobs as a dict of numpy arrays; "gpus" is a flat array indexed by gpu_offset / num_gpus.
template <class E>
py::dict finished_jobs(const E& e) {
    const auto fin = e.finished();
    const auto n = static_cast<py::ssize_t>(fin.size());
    py::array_t<std::int64_t> id(n), model(n), k(n), off(n);
    py::array_t<double> submit(n), start(n), end(n), ideal(n), cost(n), slow(n), run(n), lost(n), ckpt(n);
    py::array_t<std::int64_t> pre(n), intr(n);
    std::vector<std::int64_t> gpus;
    for (py::ssize_t i = 0; i < n; ++i) {
        const auto& r = fin[static_cast<std::size_t>(i)];
        id.mutable_at(i) = r.id;
        model.mutable_at(i) = r.model;
        k.mutable_at(i) = r.num_gpus;
        off.mutable_at(i) = static_cast<std::int64_t>(gpus.size());
        submit.mutable_at(i) = r.submit;
        start.mutable_at(i) = r.start;
        end.mutable_at(i) = r.end;
        ideal.mutable_at(i) = r.ideal_duration;
        cost.mutable_at(i) = r.comm_cost;
        slow.mutable_at(i) = r.slowdown;
        run.mutable_at(i) = r.run_time;
        lost.mutable_at(i) = r.lost_gpu_time;
        ckpt.mutable_at(i) = r.checkpoint_gpu_time;
        pre.mutable_at(i) = r.preemptions;
        intr.mutable_at(i) = r.interruptions;
        for (auto g : e.simulator().gpus_of(r)) gpus.push_back(g);
    }
    py::dict d;
    d["id"] = id;
    d["model"] = model;
    d["num_gpus"] = k;
    d["submit"] = submit;
    d["start"] = start;
    d["end"] = end;
    d["ideal_duration"] = ideal;
    d["comm_cost"] = cost;
    d["slowdown"] = slow;
    d["run_time"] = run;                    // seconds it held GPUs, over all its runs
    d["lost_gpu_time"] = lost;              // GPU-seconds lost to restarts and to work past the last checkpoint
    d["checkpoint_gpu_time"] = ckpt;        // GPU-seconds spent writing checkpoints (failures on)
    d["preemptions"] = pre;                 // times a discipline suspended it
    d["interruptions"] = intr;              // times a hardware failure stopped it
    d["gpu_offset"] = off;
    d["gpus"] = copy_array(gpus);
    const auto& fs = e.job_fields();
    if (!fs.empty()) {  // the declared fields: a float array per number field, a list of names per category field
        py::dict fd;
        for (std::size_t f = 0; f < fs.size(); ++f) {
            if (fs[f].type == gp::field_type::number) {
                py::array_t<double> a(n);
                for (py::ssize_t i = 0; i < n; ++i) a.mutable_at(i) = e.field_value(fin[std::size_t(i)].id, f);
                fd[py::str(fs[f].name)] = a;
            } else {
                py::list names;
                for (py::ssize_t i = 0; i < n; ++i) {
                    const double v = e.field_value(fin[std::size_t(i)].id, f);
                    if (v == v) names.append(e.field_categories(f).at(std::size_t(v)));
                    else names.append(py::none());
                }
                fd[py::str(fs[f].name)] = names;
            }
        }
        d["fields"] = fd;
    }
    return d;
}


template <class E>
py::dict comm_cost_of(const E& e, py::handle gpus, py::handle model) {
    const auto g = to_gpus(gpus, e.num_gpus());
    gp::model_id m;
    if (model.is_none()) {
        if (!e.has_current())
            throw gp::StateError("comm_cost: no job is being placed; pass model= (an index or a name)");
        m = e.current_job().model;
    } else {
        m = to_model(model, e.zoo());
    }
    return comm_dict(e.comm().evaluate(e.topology(), e.zoo(), m, g));
}


#define GPUPLACE_PY_INSTANTIATE_QUERIES(E)                                             \
    template py::dict info_dict<E>(const E&);                                          \
    template py::object current_job<E>(const E&);                                      \
    template py::array_t<std::int64_t> gpu_holders<E>(const E&);                       \
    template py::array_t<double> gpu_end_times<E>(const E&);                           \
    template py::dict cluster_dict<E>(const E&);                                       \
    template py::list queue_list<E>(const E&);                                         \
    template py::dict finished_jobs<E>(const E&);                                      \
    template py::dict comm_cost_of<E>(const E&, py::handle, py::handle);

GPUPLACE_PY_INSTANTIATE_QUERIES(gp::env)
#undef GPUPLACE_PY_INSTANTIATE_QUERIES

}  // namespace gpuplace_py
