{
  "targets": [
    {
      "target_name": "poad_native",
      "sources": [
        "native/addon.c",
        "native/args.c",
        "native/parallel.c",
        "native/gemm.c",
        "native/epilogue.c",
        "native/unary.c",
        "native/log_prob_stats.c",
        "native/rms_norm.c",
        "native/swiglu.c",
        "native/rope.c",
        "native/attention.c"
      ],
      "defines": ["<!@(node scripts/blas-config.cjs defines)"],
      "cflags": [
        "-std=gnu11",
        "-O3",
        "-fno-math-errno",
        "-fno-trapping-math",
        "-ffp-contract=off",
        "-fvisibility=hidden",
        "<!@(node scripts/blas-config.cjs cflags)"
      ],
      "libraries": ["<!@(node scripts/blas-config.cjs libs)"],
      "conditions": [
        ["OS=='linux'", { "libraries": ["-lpthread", "-lm"] }],
        [
          "OS=='mac'",
          {
            "xcode_settings": {
              "OTHER_CFLAGS": ["-O3", "-fno-math-errno", "-ffp-contract=off"],
              "MACOSX_DEPLOYMENT_TARGET": "11.0"
            }
          }
        ]
      ]
    }
  ]
}
