from warp_compile.cli import main

raise SystemExit(main())
