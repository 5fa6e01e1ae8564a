from omereconcile.kubectl.app import main

raise SystemExit(main())
