torchrun pretrain_gpt.py \
  --micro-batch-size 1 \
  --data-path "/data/corpus \
  --seq-length 4096
