from kubedra.cli import main

main()
