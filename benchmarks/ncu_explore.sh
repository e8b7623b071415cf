set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit 1
export PYTHONUNBUFFERED=1 TRITON_DEFAULT_FP_FUSION=1
R=/tmp/rec; mkdir -p $R
which ncu; ncu --version | tee $R/ncu_version.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $R/device.txt
ncu --query-metrics > $R/query.txt 2>&1; head -5 $R/query.txt; wc -l $R/query.txt
want="l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum l1tex__t_requests_pipe_lsu_mem_global_op_st.sum smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.pct smsp__sass_average_data_bytes_per_sector_mem_global_op_st.pct dram__bytes_read.sum dram__bytes_write.sum gpu__time_duration.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum smsp__sass_inst_executed_op_shared_ld.sum smsp__sass_inst_executed_op_shared_st.sum smsp__sass_inst_executed_op_global_atom.sum l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum lts__t_requests_op_atom.sum lts__t_sectors_op_atom.sum lts__t_requests_srcunit_l1_op_atom.sum l1tex__average_t_sectors_per_request_pipe_lsu_mem_global_op_atom.ratio"
ms=""
for m in $want; do b=${m%.*}; if grep -qE "^ *$b( |$)" $R/query.txt; then ms="$ms,$m"; else echo "MISSING $m"; fi; done
ms=${ms#,}; echo "metrics: $ms"
t0=$(date +%s.%N)
ncu --clock-control none --metrics "$ms" --section SourceCounters --import-source yes -f -o $R/survey python3 benchmarks/bank_conflict_survey.py > $R/survey_ncu.log 2>&1; echo "survey ncu rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s"
tail -3 $R/survey_ncu.log
ncu -i $R/survey.ncu-rep --page raw --csv --metrics "$ms" > $R/survey_raw.csv 2>&1
ncu -i $R/survey.ncu-rep --page source --csv --print-source cuda > $R/survey_source_cuda.csv 2>&1
python3 benchmarks/bank_conflict_survey.py --time 2>&1 | tee $R/survey_time.txt
for ex in memory_access/column_copy memory_access/row_copy memory_access/naive_transpose memory_access/tiled_transpose atomic_contention/contended_sum atomic_contention/reduced_sum atomic_contention/contended_histogram; do
  n=$(basename $ex)
  t0=$(date +%s.%N)
  ncu --clock-control none -k regex:_kernel -c 1 --metrics "$ms" --section SourceCounters --import-source yes -f -o $R/$n python3 examples/$ex.py > $R/${n}_ncu.log 2>&1
  echo "$n ncu rc=$? $(echo "$(date +%s.%N) - $t0" | bc) s"
  ncu -i $R/$n.ncu-rep --page raw --csv --metrics "$ms" > $R/${n}_raw.csv 2>&1
  ncu -i $R/$n.ncu-rep --page raw --csv --metrics "$ms" --print-units base > $R/${n}_raw_base.csv 2>&1
  ncu -i $R/$n.ncu-rep --page source --csv --print-source cuda > $R/${n}_source_cuda.csv 2>&1
  ncu -i $R/$n.ncu-rep --page source --csv --print-source sass > $R/${n}_source_sass.csv 2>&1
done
t0=$(date +%s.%N); python3 examples/memory_access/column_copy.py; echo "plain column_copy $(echo "$(date +%s.%N) - $t0" | bc) s"
ncu --clock-control none -k regex:no_such_kernel -c 1 --metrics "$ms" python3 examples/memory_access/row_copy.py > $R/nokernel.log 2>&1; echo "nokernel rc=$?"
ncu --clock-control none --metrics l1tex__no_such_metric.sum python3 examples/memory_access/row_copy.py > $R/badmetric.log 2>&1; echo "badmetric rc=$?"
ncu --clock-control none -c 1 --csv --page raw --metrics "$ms" python3 examples/memory_access/row_copy.py > $R/direct_csv.log 2>&1; echo "direct rc=$?"
ncu --clock-control none -c 1 --csv --page raw --metrics "$ms" --log-file $R/direct_logfile.csv python3 examples/memory_access/row_copy.py > $R/direct_stdout.log 2>&1; echo "logfile rc=$?"
head -c 3000 $R/column_copy_raw.csv; echo; head -c 2500 $R/column_copy_source_cuda.csv; echo; head -c 2500 $R/column_copy_source_sass.csv; echo
cat $R/nokernel.log | tail -5; tail -5 $R/badmetric.log
rm -f $R/*.ncu-rep.bak
ls -la $R
tar czf $OUT/rec.tgz -C /tmp rec
cp $R/survey_time.txt $OUT/
echo ===== survey; cat $R/survey_time.txt
