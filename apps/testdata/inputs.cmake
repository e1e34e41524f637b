# Bad input to the programs (the files in apps/testdata/inputs/): each case exits with its status
# (1: the program's own error, 2: a usage error) and prints its message, checked as literal text,
# before any work starts. Included by apps/CMakeLists.txt, which sets exit_status and smoke.
#   input_case(<name> <program> <status> <text> <args>...)
set(in ${CMAKE_CURRENT_SOURCE_DIR}/testdata/inputs)
set(scratch ${CMAKE_CURRENT_BINARY_DIR}/inputs_out)
file(MAKE_DIRECTORY ${scratch})
function(input_case name program status text)
  add_test(NAME app_input_${name} COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:${program}> "-DARGS=${ARGN}" -DEXPECT=${status}
           "-DCONTAINS=${text}" -P ${exit_status})
endfunction()

# ---- gpuplace-train: the config file ---------------------------------------------------------------
foreach(kind array null string number)
  input_case(train_config_${kind} gpuplace-train 1
             "gpuplace-train: error: ${in}/config_${kind}.json: config /: a training config must be an object"
             --config ${in}/config_${kind}.json --out ${scratch}/train)
endforeach()
input_case(train_config_ppo_null gpuplace-train 1 "${in}/config_ppo_null.json: config /ppo: expected an object, got null"
           --config ${in}/config_ppo_null.json --out ${scratch}/train)
input_case(train_config_network_number gpuplace-train 1 "${in}/config_network_number.json: config /ppo/network: expected an object, got 3"
           --config ${in}/config_network_number.json --out ${scratch}/train)
input_case(train_validation_seeds_0 gpuplace-train 1
           "${in}/config_validation_seeds_0.json: config /validation_seeds: value 0 out of range [1, 100000]"
           --config ${in}/config_validation_seeds_0.json --out ${scratch}/train)
input_case(train_duplicate_key gpuplace-train 1
           "${in}/config_duplicate_key.json: config /ppo/seed: duplicate key \"seed\" (a key may appear only once in an object)"
           --config ${in}/config_duplicate_key.json --out ${scratch}/train)
input_case(train_config_value gpuplace-train 1 "${in}/config_bad_rate.json: config /ppo/learning_rate: value -1 out of range"
           --config ${in}/config_bad_rate.json --out ${scratch}/train)
input_case(train_config_binary gpuplace-train 1
           "gpuplace-train: error: ${in}/scenario_binary.json: not a JSON text file: byte 1 is 0x89, which is not UTF-8 text"
           --config ${in}/scenario_binary.json --out ${scratch}/train)
input_case(train_config_directory gpuplace-train 1 "gpuplace-train: error: config file ${in} is a directory, not a file"
           --config ${in} --out ${scratch}/train)
input_case(train_scenario_flag gpuplace-train 1 "gpuplace-train: error: cannot open scenario file \"${in}/no_such.json\""
           --scenario ${in}/no_such.json --out ${scratch}/train)

# ---- gpuplace-train: flags, the run folder, the checkpoint ---------------------------------------
input_case(train_steps_not_a_number gpuplace-train 2 "gpuplace-train: --steps: \"abc\" is not a whole number (expected 1 or more)"
           --steps abc)
input_case(train_seed_negative gpuplace-train 2 "gpuplace-train: --seed: \"-1\" is not a whole number (expected 0 or more)" --seed -1)
add_test(NAME app_input_train_out_empty COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gpuplace-train> -DARGS=--out -DEMPTY_LAST=ON
         -DEXPECT=1 "-DCONTAINS=gpuplace-train: error: --out: an empty folder name" -P ${exit_status})
input_case(train_restarts_range gpuplace-train 2 "gpuplace-train: --restarts: 65 is out of range (expected 1 to 64)" --restarts 65)
input_case(train_compare_on_empty gpuplace-train 2 "gpuplace-train: --compare-on \"default,,philly\": item 2 is empty"
           --compare-on default,,philly)
input_case(train_resume_overwrite gpuplace-train 2 "gpuplace-train: --resume excludes --overwrite" --resume --overwrite)
input_case(train_out_is_a_file gpuplace-train 1
           "gpuplace-train: error: --out ${in}/config_array.json: ${in}/config_array.json is a file, not a folder"
           --config ${CMAKE_CURRENT_SOURCE_DIR}/testdata/train_smoke.json --out ${in}/config_array.json)
input_case(train_out_holds_a_run gpuplace-train 1
           "gpuplace-train: error: --out ${smoke} already holds a run (${smoke}/run.json): continue it with --resume, start it over with --overwrite, or choose another folder with --out"
           --config ${CMAKE_CURRENT_SOURCE_DIR}/testdata/train_smoke.json --out ${smoke} --no-plot)
input_case(train_resume_changed gpuplace-train 1
           "/ppo/total_steps (the run's 1024, --steps 2048), /scenario (the run's {\"name\":\"smoke\""
           --out ${smoke} --resume --scenario proximity_drl --steps 2048)
input_case(train_resume_changed_says_what gpuplace-train 1 "--scenario \"proximity_drl\")"
           --out ${smoke} --resume --scenario proximity_drl)
input_case(train_resume_nothing gpuplace-train 1
           "gpuplace-train: error: resume: ${scratch}/no_run holds no run to resume (${scratch}/no_run/run.json does not exist)"
           --out ${scratch}/no_run --resume)
set_tests_properties(app_input_train_out_holds_a_run app_input_train_resume_changed app_input_train_resume_changed_says_what
                     PROPERTIES FIXTURES_REQUIRED train_smoke)
input_case(train_load_directory gpuplace-train 1 "gpuplace-train: error: checkpoint ${in} is a directory, not a file" --load ${in})
input_case(train_load_own_scenario gpuplace-train 0 "loaded philly (scenario philly)"
           --load philly --seeds 1 --no-plot --out ${scratch}/load_philly)

# ---- gpuplace-eval --------------------------------------------------------------------------------
input_case(eval_seeds_not_a_number gpuplace-eval 2 "gpuplace-eval: --seeds: \"abc\" is not a whole number (expected 1 to 1000000)"
           --seeds abc)
input_case(eval_time_scale gpuplace-eval 2
           "gpuplace-eval: --time-scale: 1e300 is out of range (expected a number in [1e-12, 1e+12])"
           --trace ${in}/trace_two_jobs.csv --format csv --time-scale 1e300)
input_case(eval_window gpuplace-eval 2 "gpuplace-eval: --window 5,1: START must be below END"
           --trace ${in}/trace_two_jobs.csv --format csv --window 5,1)
input_case(eval_episode_jobs gpuplace-eval 1
           "gpuplace-eval: error: --episode-jobs 100: the trace ${in}/trace_two_jobs.csv has 2 jobs (after the trace options); give at most 2"
           --trace ${in}/trace_two_jobs.csv --format csv --episode-jobs 100 --seeds 1)
input_case(eval_episode_jobs_of_a_preset gpuplace-eval 0
           "gpuplace-eval: warning: the scenario asks for episodes of 200 jobs (episode_jobs), but the trace ${PROJECT_SOURCE_DIR}/data/philly/795a4c.trace has 3 jobs (after the trace options): each episode replays the whole trace"
           --scenario philly:795a4c --seeds 1 --policies pack)
input_case(eval_submit_time gpuplace-eval 1
           "gpuplace-eval: error: ${in}/trace_submit_1e300.csv:3:1: submit_time: 1e300 s is later than 1e10 s"
           --trace ${in}/trace_submit_1e300.csv --format csv --seeds 1)
input_case(eval_duration gpuplace-eval 1
           "gpuplace-eval: error: ${in}/trace_duration_1e-300.csv:3:6: duration: 1e-300 s is shorter than the 0.001 s minimum"
           --trace ${in}/trace_duration_1e-300.csv --format csv --seeds 1)
input_case(eval_trace_directory gpuplace-eval 1 "gpuplace-eval: error: ${in} is a directory, not a file"
           --trace ${in} --format csv --seeds 1)
input_case(eval_scenario_binary gpuplace-eval 1
           "gpuplace-eval: error: ${in}/scenario_binary.json: not a JSON text file: byte 1 is 0x89, which is not UTF-8 text (a binary file?)"
           --scenario ${in}/scenario_binary.json)
input_case(eval_scenario_duplicate_key gpuplace-eval 1
           "gpuplace-eval: error: ${in}/scenario_duplicate_key.json: config /env/queue_window: duplicate key \"queue_window\""
           --scenario ${in}/scenario_duplicate_key.json)
input_case(eval_csv_folder_missing gpuplace-eval 1
           "gpuplace-eval: error: --csv ${scratch}/no_such_folder/x.csv: the folder ${scratch}/no_such_folder does not exist"
           --seeds 1 --csv ${scratch}/no_such_folder/x.csv)
add_test(NAME app_input_eval_csv_empty COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gpuplace-eval> "-DARGS=--seeds;1;--csv"
         -DEMPTY_LAST=ON -DEXPECT=1 "-DCONTAINS=gpuplace-eval: error: --csv: an empty file name" -P ${exit_status})
input_case(eval_json_is_a_directory gpuplace-eval 1 "gpuplace-eval: error: --json ${scratch}: ${scratch} is a directory, not a file"
           --seeds 1 --json ${scratch})
input_case(eval_summary_in_a_file gpuplace-eval 1
           "gpuplace-eval: error: --summary-csv ${in}/config_array.json/s.csv: ${in}/config_array.json is a file, not a folder"
           --seeds 1 --summary-csv ${in}/config_array.json/s.csv)

# ---- gpuplace-soak --------------------------------------------------------------------------------
add_test(NAME app_input_soak_memory COMMAND ${CMAKE_COMMAND} -E env GPUPLACE_TEST_AVAILABLE_KB=1000
         ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gpuplace-soak> "-DARGS=--envs;100000;--steps;1000" -DEXPECT=1
         "-DCONTAINS=envs); this machine has 1000 kB available (MemAvailable in /proc/meminfo)" -P ${exit_status})
input_case(soak_steps_zero gpuplace-soak 2 "gpuplace-soak: --steps: 0 is out of range (expected 1 or more)" --steps 0)
input_case(soak_growth_negative gpuplace-soak 2 "gpuplace-soak: --max-growth-kb: \"-5\" is not a whole number (expected 0 or more)"
           --max-growth-kb -5)
input_case(soak_envs_range gpuplace-soak 2 "gpuplace-soak: --envs: 1048577 is out of range (expected 1 to 1048576)" --envs 1048577)
input_case(soak_steps_below_envs gpuplace-soak 0
           "gpuplace-soak: warning: --steps 2 is less than one step of each of the 4 envs: each env steps once (4 steps in all)"
           --envs 4 --steps 2)
input_case(soak_scenario_directory gpuplace-soak 1 "gpuplace-soak: error: scenario file ${in} is a directory, not a file"
           --scenario ${in})

# ---- NaN, infinities, negatives and empty names: refused with the option and the value -------------
input_case(eval_restart_overhead_nan gpuplace-eval 2
           "gpuplace-eval: --restart-overhead: \"nan\" is not a number (expected a number in [0, 1e+07])" --restart-overhead nan)
input_case(eval_round_inf gpuplace-eval 2 "gpuplace-eval: --round: \"inf\" is not a number (expected a number in [0, 1e+09])" --round inf)
input_case(eval_round_negative gpuplace-eval 2 "gpuplace-eval: --round: -10 is out of range (expected a number in [0, 1e+09])" --round -10)
add_test(NAME app_input_eval_queue_empty COMMAND ${CMAKE_COMMAND} -DPROGRAM=$<TARGET_FILE:gpuplace-eval> "-DARGS=--seeds;1;--queue"
         -DEMPTY_LAST=ON -DEXPECT=2 "-DCONTAINS=gpuplace-eval: --queue \"\": no queue policy named (give one or more of fifo, backfill, sjf"
         -P ${exit_status})
input_case(eval_queue_empty_item gpuplace-eval 2 "gpuplace-eval: --queue \"las,,sjf\": item 2 is empty (give one or more of fifo, backfill, sjf"
           --queue las,,sjf)

# ---- what is not a regular file, and output folders that cannot be written -------------------------
set(dev_zero "/dev/zero is a character device, not a regular file (an input must be a file of at most 1 GiB (1073741824 bytes))")
input_case(eval_scenario_dev_zero gpuplace-eval 1 "gpuplace-eval: error: scenario file ${dev_zero}" --scenario /dev/zero)
input_case(eval_trace_dev_zero gpuplace-eval 1 "gpuplace-eval: error: ${dev_zero}" --trace /dev/zero --format csv --seeds 1)
input_case(eval_topology_dev_zero gpuplace-eval 1 "gpuplace-eval: error: --topology: ${dev_zero}" --topology /dev/zero --seeds 1)
input_case(train_config_dev_zero gpuplace-train 1 "gpuplace-train: error: config file ${dev_zero}" --config /dev/zero --out ${scratch}/train)
input_case(train_load_dev_zero gpuplace-train 1 "gpuplace-train: error: checkpoint ${dev_zero}" --load /dev/zero --out ${scratch}/train)
input_case(bench_validate_dev_zero gpuplace-bench 1 "/dev/zero: INVALID: result file ${dev_zero}" validate /dev/zero --quiet)
input_case(bench_out_dir_proc gpuplace-bench 1 "gpuplace-bench: error: --out-dir /proc/gpuplace_results: cannot write in /proc ("
           run --track proximity_drl --policy pack --out-dir /proc/gpuplace_results --quiet)
input_case(eval_json_proc gpuplace-eval 1 "gpuplace-eval: error: --json /proc/gpuplace.json: cannot write in /proc (" --seeds 1 --json /proc/gpuplace.json)
input_case(train_out_proc gpuplace-train 1 "gpuplace-train: error: --out /proc/gpuplace_run: cannot write in /proc ("
           --config ${CMAKE_CURRENT_SOURCE_DIR}/testdata/train_smoke.json --out /proc/gpuplace_run --no-plot)
input_case(eval_scenario_unknown gpuplace-eval 1
           "gpuplace-eval: error: scenario \"nosuch\": not JSON text (it does not start with '{'), not a preset (default, proximity_drl, colocation"
           --scenario nosuch)
input_case(eval_planner_huge_cluster gpuplace-eval 1
           "gpuplace-eval: error: policy \"rollout:pack\": a rollout planner on 100000 GPUs does not finish in reasonable time"
           --scenario ${in}/scenario_huge_placement.json --policies rollout:pack --seeds 1)
input_case(bench_planner_huge_cluster gpuplace-bench 1 "the limit is 4096 GPUs (rollout_options::max_gpus"
           run --scenario ${in}/scenario_huge_placement.json --policy hindsight:pack --episodes 1 --quiet)
input_case(bench_short_trace gpuplace-bench 0
           "gpuplace-bench: warning: --scenario ${in}/scenario_short_trace.json: the trace ${in}/trace_two_jobs.csv has 2 jobs (after the trace options), fewer than the 50 jobs per episode asked (episode_jobs): each of its episodes replays all 2"
           run --scenario ${in}/scenario_short_trace.json --policy pack --episodes 1 --quiet)
input_case(train_short_trace gpuplace-train 1
           "gpuplace-train: warning: scenario short_trace asks for episodes of 50 jobs (episode_jobs), but its trace gives 2 (seed 1's episode)"
           --scenario ${in}/scenario_short_trace.json --out /proc/gpuplace_run --no-plot)
